/* The static instruction mix of one shader stage, counted over the
 * instructions of its SPIR-V functions (opcodes from spirv-headers). */
#include "spirv_mix.h"

#include <spirv/unified1/spirv.h>

static bool is_texture(uint32_t op)
{
    return (op >= SpvOpImageSampleImplicitLod && op <= SpvOpImageRead) ||
           (op >= SpvOpImageSparseSampleImplicitLod && op <= SpvOpImageSparseRead);
}

static bool is_alu(uint32_t op)
{
    return op == SpvOpExtInst || (op >= SpvOpConvertFToU && op <= SpvOpBitcast) ||
           (op >= SpvOpSNegate && op <= SpvOpFwidthCoarse);
}

static bool is_branch(uint32_t op)
{
    return op == SpvOpBranch || op == SpvOpBranchConditional || op == SpvOpSwitch ||
           op == SpvOpReturn || op == SpvOpReturnValue;
}

static bool is_discard(uint32_t op)
{
    return op == SpvOpKill || op == SpvOpTerminateInvocation ||
           op == SpvOpDemoteToHelperInvocationEXT;
}

bool tally_spirv_mix(const uint32_t *words, size_t count, tally_stage_profile *out)
{
    enum { HEADER_WORDS = 5 };
    if (!words || count < HEADER_WORDS || words[0] != SpvMagicNumber)
        return false;
    bool in_function = false;
    for (size_t at = HEADER_WORDS; at < count;) {
        uint32_t op = words[at] & SpvOpCodeMask;
        uint32_t length = words[at] >> SpvWordCountShift;
        if (length == 0 || at + length > count)
            return false;
        if (op == SpvOpFunction)
            in_function = true;
        if (in_function) {
            out->mix.alu += is_alu(op);
            out->mix.tex += is_texture(op);
            out->mix.load += op == SpvOpLoad;
            out->mix.store += op == SpvOpStore;
            out->mix.branch += is_branch(op);
            out->discards = out->discards || is_discard(op);
        }
        at += length;
    }
    return true;
}
