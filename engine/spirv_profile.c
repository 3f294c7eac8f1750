/* Reading a stage's static profile out of SPIR-V (see tally/spirv.h). */
#include "tally/spirv.h"

#include <spirv/unified1/spirv.h>
#include <stdlib.h>
#include <string.h>

/* What the module says about one result id. */
typedef struct id_info {
    uint32_t value;  /* scalar constant value (low 32 bits) */
    int32_t spec_id; /* SpecId decoration, or -1 */
    uint32_t components[3];
    uint8_t component_count;
    bool workgroup_size; /* decorated BuiltIn WorkgroupSize */
} id_info;

typedef struct module_scan {
    id_info *ids;
    uint32_t bound;
    uint32_t entry_id;
    bool has_entry;
    const uint32_t *local_size;    /* LocalSize literal operands */
    const uint32_t *local_size_id; /* LocalSizeId id operands */
} module_scan;

static void count_instruction(SpvOp op, tally_instruction_mix *mix, bool *discards)
{
    switch (op) {
    case SpvOpImageSampleImplicitLod ... SpvOpImageWrite:
    case SpvOpImageSparseSampleImplicitLod ... SpvOpImageSparseRead:
        if (op == SpvOpImageWrite)
            mix->store++;
        else
            mix->tex++;
        break;
    case SpvOpLoad:
    case SpvOpAtomicLoad: mix->load++; break;
    case SpvOpStore:
    case SpvOpAtomicStore ... SpvOpAtomicXor: mix->store++; break;
    case SpvOpBranch:
    case SpvOpBranchConditional:
    case SpvOpSwitch:
    case SpvOpReturn:
    case SpvOpReturnValue:
    case SpvOpFunctionCall: mix->branch++; break;
    case SpvOpKill:
    case SpvOpTerminateInvocation:
    case SpvOpDemoteToHelperInvocation:
        mix->branch++;
        *discards = true;
        break;
    case SpvOpExtInst:
    case SpvOpVectorExtractDynamic ... SpvOpTranspose:
    case SpvOpConvertFToU ... SpvOpBitcast:
    case SpvOpSNegate ... SpvOpUnordered:
    case SpvOpLogicalEqual ... SpvOpBitCount:
    case SpvOpDPdx ... SpvOpFwidthCoarse: mix->alu++; break;
    default: break;
    }
}

static bool scan_declarations(module_scan *scan, const uint32_t *words, size_t count,
                              const char *entry_point)
{
    for (size_t at = 5; at < count;) {
        uint32_t length = words[at] >> 16;
        SpvOp op = words[at] & 0xffff;
        if (length == 0 || at + length > count)
            return false;
        const uint32_t *w = words + at;
        switch (op) {
        case SpvOpEntryPoint:
            if (length > 3 && strncmp((const char *)(w + 3), entry_point, (length - 3) * 4) == 0) {
                scan->entry_id = w[2];
                scan->has_entry = true;
            }
            break;
        case SpvOpDecorate:
            if (length >= 4 && w[1] < scan->bound && w[2] == SpvDecorationSpecId)
                scan->ids[w[1]].spec_id = (int32_t)w[3];
            if (length >= 4 && w[1] < scan->bound && w[2] == SpvDecorationBuiltIn &&
                w[3] == SpvBuiltInWorkgroupSize)
                scan->ids[w[1]].workgroup_size = true;
            break;
        case SpvOpConstant:
        case SpvOpSpecConstant:
            if (length >= 4 && w[2] < scan->bound)
                scan->ids[w[2]].value = w[3];
            break;
        case SpvOpConstantComposite:
        case SpvOpSpecConstantComposite:
            if (w[2] < scan->bound) {
                id_info *id = &scan->ids[w[2]];
                for (uint32_t i = 3; i < length && id->component_count < 3; i++)
                    id->components[id->component_count++] = w[i];
            }
            break;
        default: break;
        }
        at += length;
    }
    return scan->has_entry;
}

static void apply_specialization(module_scan *scan, const tally_spirv_specialization *spec)
{
    if (!spec || !spec->entries || !spec->data)
        return;
    for (uint32_t id = 0; id < scan->bound; id++) {
        if (scan->ids[id].spec_id < 0)
            continue;
        for (uint32_t e = 0; e < spec->entry_count; e++) {
            const tally_spirv_spec_entry *entry = &spec->entries[e];
            if (entry->constant_id != (uint32_t)scan->ids[id].spec_id ||
                entry->offset + entry->size > spec->data_size)
                continue;
            uint32_t value = 0;
            memcpy(&value, (const char *)spec->data + entry->offset,
                   entry->size < sizeof(value) ? entry->size : sizeof(value));
            scan->ids[id].value = value;
        }
    }
}

static uint32_t value_of(const module_scan *scan, uint32_t id)
{
    return id < scan->bound ? scan->ids[id].value : 0;
}

static void scan_body(module_scan *scan, const uint32_t *words, size_t count,
                      tally_stage_profile *profile)
{
    bool in_function = false;
    for (size_t at = 5; at < count;) {
        uint32_t length = words[at] >> 16;
        SpvOp op = words[at] & 0xffff;
        const uint32_t *w = words + at;
        if ((op == SpvOpExecutionMode || op == SpvOpExecutionModeId) && length >= 3 &&
            w[1] == scan->entry_id) {
            switch (w[2]) {
            case SpvExecutionModeLocalSize:
                if (length >= 6)
                    scan->local_size = w + 3;
                break;
            case SpvExecutionModeLocalSizeId:
                if (length >= 6)
                    scan->local_size_id = w + 3;
                break;
            case SpvExecutionModeOutputVertices:
                if (length >= 4)
                    profile->output_vertices = w[3];
                break;
            case SpvExecutionModeInvocations:
                if (length >= 4)
                    profile->invocations = w[3];
                break;
            default: break;
            }
        }
        if (op == SpvOpFunction)
            in_function = true;
        else if (op == SpvOpFunctionEnd)
            in_function = false;
        else if (in_function)
            count_instruction(op, &profile->mix, &profile->discards);
        at += length;
    }
}

static void resolve_local_size(const module_scan *scan, tally_stage_profile *profile)
{
    for (uint32_t id = 0; id < scan->bound; id++) {
        const id_info *info = &scan->ids[id];
        if (info->workgroup_size && info->component_count == 3) {
            for (int i = 0; i < 3; i++)
                profile->local_size[i] = value_of(scan, info->components[i]);
            return;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (scan->local_size_id)
            profile->local_size[i] = value_of(scan, scan->local_size_id[i]);
        else if (scan->local_size)
            profile->local_size[i] = scan->local_size[i];
    }
}

bool tally_spirv_stage_profile(const uint32_t *words, size_t word_count, const char *entry_point,
                               const tally_spirv_specialization *specialization,
                               tally_stage_profile *profile)
{
    if (!words || word_count < 5 || words[0] != SpvMagicNumber || !entry_point)
        return false;
    module_scan scan = {.bound = words[3]};
    if (scan.bound > (1u << 22))
        return false;
    scan.ids = calloc(scan.bound ? scan.bound : 1, sizeof(*scan.ids));
    if (!scan.ids)
        return false;
    for (uint32_t i = 0; i < scan.bound; i++)
        scan.ids[i].spec_id = -1;
    bool ok = scan_declarations(&scan, words, word_count, entry_point);
    if (ok) {
        apply_specialization(&scan, specialization);
        profile->present = true;
        scan_body(&scan, words, word_count, profile);
        resolve_local_size(&scan, profile);
    }
    free(scan.ids);
    return ok;
}
