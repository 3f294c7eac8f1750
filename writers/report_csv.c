/*
 * The per-command report as CSV (RFC 4180): a header naming the record's
 * fields and then each counter's symbol, and one row per command.
 */
#include <string.h>

#include "report_rows.h"
#include "report_text.h"

static const char record_header[] =
    "sequence,kind,api_name,context,context_api,frame,submission,stream,label,pid,tid,pipeline,"
    "pipeline_name,shader_hash,target_width,target_height,begin_ns,end_ns,duration_ns";

void report_csv_header(tally_report *r)
{
    size_t bound = sizeof record_header + 1;
    for (uint32_t i = 0; i < r->count; i++)
        bound += 1 + TEXT_CSV_MAX(strlen(r->columns[i]->symbol));
    char *p = report_text_room(r, bound);
    if (!p)
        return; /* the open fails: the file is not committed */
    memcpy(p, record_header, sizeof record_header - 1);
    p += sizeof record_header - 1;
    for (uint32_t i = 0; i < r->count; i++) {
        const char *symbol = r->columns[i]->symbol;
        *p++ = ',';
        p = text_csv_field(p, symbol, strlen(symbol));
    }
    *p++ = '\n';
    report_text_used(r, p);
}

size_t report_csv_row_bound(const tally_report *r, const struct report_strings *n)
{
    size_t numbers = 14 * (TEXT_INTEGER_MAX + 1);
    size_t strings = TEXT_CSV_MAX(n->kind) + TEXT_CSV_MAX(n->api_name) +
                     TEXT_CSV_MAX(n->context_api) + TEXT_CSV_MAX(n->label) +
                     TEXT_CSV_MAX(n->pipeline_name) + 5;
    return numbers + strings + (size_t)r->count * (TEXT_FIXED3_MAX + 1) + 1;
}

static char *put_field(char *p, const char *s, size_t n)
{
    p = text_csv_field(p, s, n);
    *p++ = ',';
    return p;
}

static char *put_number(char *p, uint64_t v)
{
    p = text_u64(p, v);
    *p++ = ',';
    return p;
}

char *report_csv_row(const tally_report *r, char *p, const tally_command_record *record,
                     const struct report_strings *n, const tally_value *values)
{
    p = put_number(p, record->sequence);
    p = put_field(p, record->kind, n->kind);
    p = put_field(p, record->api_name, n->api_name);
    p = put_number(p, record->context);
    p = put_field(p, record->context_api, n->context_api);
    p = put_number(p, record->frame);
    p = put_number(p, record->submission);
    p = put_number(p, record->stream);
    p = put_field(p, record->label, n->label);
    memcpy(p, r->pid_text, r->pid_length);
    p += r->pid_length;
    *p++ = ',';
    p = put_number(p, record->tid);
    p = put_number(p, record->pipeline);
    p = put_field(p, n->pipeline_name_text, n->pipeline_name);
    p = text_hex16(p, record->shader_hash);
    *p++ = ',';
    p = put_number(p, record->target_width);
    p = put_number(p, record->target_height);
    p = put_number(p, record->begin_ns);
    p = put_number(p, record->end_ns);
    p = text_u64(p, record->end_ns >= record->begin_ns ? record->end_ns - record->begin_ns : 0);
    for (uint32_t i = 0; i < r->count; i++) {
        *p++ = ',';
        if (!report_value_unmeasured(record, i)) /* else the field stays empty */
            p = report_put_value(p, r->columns[i], values[i], false);
    }
    *p++ = '\n';
    return p;
}
