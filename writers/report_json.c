/*
 * The per-command report as one JSON document:
 *   {"counters":[{"symbol":S,"unit":U,"exactness":E},...],
 *    "commands":[{"sequence":N,"kind":...,"values":{S:V,...}},...],
 *    "metadata":{...}}
 * with one command a line; report_metadata.c writes the metadata.
 */
#include <string.h>

#include "report_rows.h"
#include "report_text.h"

static char *put_literal(char *p, const char *text)
{
    size_t n = strlen(text);
    memcpy(p, text, n);
    return p + n;
}

static const char *unit_of(const tally_counter_info *counter)
{
    return counter->unit_name ? counter->unit_name : "";
}

void report_json_header(tally_report *r)
{
    size_t bound = 64;
    for (uint32_t i = 0; i < r->count; i++)
        bound += 64 + TEXT_JSON_MAX(strlen(r->columns[i]->symbol)) +
                 TEXT_JSON_MAX(strlen(unit_of(r->columns[i])));
    char *p = report_text_room(r, bound);
    if (!p)
        return; /* the open fails: the file is not committed */
    p = put_literal(p, "{\"counters\":[");
    for (uint32_t i = 0; i < r->count; i++) {
        const char *symbol = r->columns[i]->symbol, *unit = unit_of(r->columns[i]);
        p = put_literal(p, i ? ",{\"symbol\":" : "{\"symbol\":");
        p = text_json_string(p, symbol, strlen(symbol));
        p = put_literal(p, ",\"unit\":");
        p = text_json_string(p, unit, strlen(unit));
        p = put_literal(p, ",\"exactness\":\"");
        p = put_literal(p, report_counter_exactness(r->columns[i]));
        p = put_literal(p, "\"}");
    }
    p = put_literal(p, "],\n\"commands\":[");
    report_text_used(r, p);
}

size_t report_json_row_bound(const tally_report *r, const struct report_strings *n)
{
    size_t fixed = 512 + 14 * TEXT_INTEGER_MAX;
    size_t strings = TEXT_JSON_MAX(n->kind) + TEXT_JSON_MAX(n->api_name) +
                     TEXT_JSON_MAX(n->context_api) + TEXT_JSON_MAX(n->label) +
                     TEXT_JSON_MAX(n->pipeline_name);
    size_t values = 0;
    for (uint32_t i = 0; i < r->count; i++)
        values += TEXT_JSON_MAX(strlen(r->columns[i]->symbol)) + 2 + TEXT_FIXED3_MAX;
    return fixed + strings + values;
}

char *report_json_row(const tally_report *r, char *p, const tally_command_record *record,
                      const struct report_strings *n, const tally_value *values)
{
    p = put_literal(p, r->rows ? ",\n{\"sequence\":" : "\n{\"sequence\":");
    p = text_u64(p, record->sequence);
    p = put_literal(p, ",\"kind\":");
    p = text_json_string(p, record->kind, n->kind);
    p = put_literal(p, ",\"api_name\":");
    p = text_json_string(p, record->api_name, n->api_name);
    p = put_literal(p, ",\"context\":");
    p = text_u64(p, record->context);
    p = put_literal(p, ",\"context_api\":");
    p = text_json_string(p, record->context_api, n->context_api);
    p = put_literal(p, ",\"frame\":");
    p = text_u64(p, record->frame);
    p = put_literal(p, ",\"submission\":");
    p = text_u64(p, record->submission);
    p = put_literal(p, ",\"stream\":");
    p = text_u64(p, record->stream);
    p = put_literal(p, ",\"label\":");
    p = text_json_string(p, record->label, n->label);
    p = put_literal(p, ",\"pid\":");
    memcpy(p, r->pid_text, r->pid_length);
    p += r->pid_length;
    p = put_literal(p, ",\"tid\":");
    p = text_u64(p, record->tid);
    p = put_literal(p, ",\"pipeline\":");
    p = text_u64(p, record->pipeline);
    p = put_literal(p, ",\"pipeline_name\":");
    p = text_json_string(p, n->pipeline_name_text, n->pipeline_name);
    p = put_literal(p, ",\"shader_hash\":\"");
    p = text_hex16(p, record->shader_hash);
    p = put_literal(p, "\",\"target_width\":");
    p = text_u64(p, record->target_width);
    p = put_literal(p, ",\"target_height\":");
    p = text_u64(p, record->target_height);
    p = put_literal(p, ",\"begin_ns\":");
    p = text_u64(p, record->begin_ns);
    p = put_literal(p, ",\"end_ns\":");
    p = text_u64(p, record->end_ns);
    p = put_literal(p, ",\"duration_ns\":");
    p = text_u64(p, record->end_ns >= record->begin_ns ? record->end_ns - record->begin_ns : 0);
    p = put_literal(p, ",\"values\":{");
    for (uint32_t i = 0; i < r->count; i++) {
        const char *symbol = r->columns[i]->symbol;
        if (i)
            *p++ = ',';
        p = text_json_string(p, symbol, strlen(symbol));
        *p++ = ':';
        p = report_value_unmeasured(record, i)
                ? put_literal(p, "null")
                : report_put_value(p, r->columns[i], values[i], true);
    }
    return put_literal(p, "}}");
}

void report_json_footer(tally_report *r)
{
    char *p = report_text_room(r, 8);
    if (p)
        report_text_used(r, put_literal(p, "\n]"));
}
