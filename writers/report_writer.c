/* Owns the per-command counter report: one row (CSV) or object (JSON) per
 * command, formatted without stdio into a large buffer that reaches the file
 * two megabytes at a time. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "atomic_file.h"
#include "report_keyed.h"
#include "report_text.h"
#include "text_columns.h"
#include "text_counts.h"
#include "text_format.h"
#include "text_vector.h"
#include "tally/report.h"

/*
 * The text buffer is one 2 MiB page where the system gives huge pages
 * (asked for with MADV_HUGEPAGE; small pages work the same). Its whole
 * pages go to the file with O_DIRECT (flush_text), and the kernel pins
 * the buffer for each write: one huge page instead of 256 small ones per
 * megabyte. On the H100's host (a virtual machine) that made a row 8 to
 * 14 % cheaper, most of it the kernel's part (docs/benchmarks-history.md, round
 * eleven). It has SLACK bytes past its size: the row formatter copies in
 * 16-byte pieces and the number formatters store 8 bytes at a time.
 */
enum {
    TEXT_ALLOCATION = 2 * 1024 * 1024,
    SLACK = 64,
    TEXT_BUFFER_SIZE = TEXT_ALLOCATION - SLACK,
    TEXT_PAGE = 4096
};

/* How a column's values are written. */
enum column_kind { COLUMN_SIGNED, COLUMN_UNSIGNED, COLUMN_FLOAT };

/* A segment's context_state while it holds none: above every context with
 * every state. */
#define NO_SEGMENT UINT64_MAX

/* The text between a row's sequence and its begin_ns (CSV) or begin_ns key
 * (JSON): the same for every command of a stream until its frame, label or
 * submission changes, so it is formatted once and copied. */
struct segment {
    /* the strings as same_strings compares them: each below 32 bytes (most
     * names of a report) in a 32-byte slot, NUL-padded, and 0xff in
     * `ignored` past its NUL (the bytes of a record's string there are not
     * compared) */
    _Alignas(16) char slots[4][32];
    _Alignas(16) uint8_t ignored[4][32];
    bool short_strings; /* all four in slots */
    /* The record's string pointers when all four are in slots and their
     * loads lie within a page: a record with the same pointers (most: the
     * same names and label again, maybe rewritten in place) is compared
     * without the pages checked, nor the pointers checked for NULL. Else
     * pointers no caller has (the array's own address). */
    const char *pointers[4];
    /* A record's fields from api_name to label (the four pointers, context,
     * frame, submission and stream; context's padding 0) as a record of
     * this segment has them: the IFMA way compares them in one instruction
     * (segment_matches_image). Where pointers holds no caller's, neither
     * does this: it matches no record. Loaded unaligned: the report is a
     * calloc's, aligned to 16 bytes. */
    uint32_t image[16];
    /* the numbers as segment_matches compares them: the record's frame,
     * submission and stream, and its context in the low 32 bits of
     * context_state with the segment's state above them, 0 for one of
     * compared strings (one compare for both); NO_SEGMENT while none is
     * made */
    uint64_t numbers[3];
    uint64_t context_state;
    /* How the next row finds out whether it shares this segment: */
    enum segment_keyed {
        SEGMENT_COMPARED,    /* by its strings' bytes (tally_report_write) */
        SEGMENT_RUN_KEYED,   /* report_write_run: key, kind and api_name */
        SEGMENT_CALLER_KEYED /* tally_report_write_keyed: the caller's key */
    } keyed;
    uint64_t key;
    const char *kind, *api_name;
    size_t lengths[4];   /* kind, api_name, context_api, label */
    char *strings;       /* the four, each with its NUL */
    uint32_t offsets[4]; /* each string's first byte in strings */
    size_t strings_capacity;
    char *text; /* capacity rounded up to 16, for copies in 16-byte pieces */
    size_t text_length, text_capacity;
    size_t row_bound; /* most bytes a row with this segment takes, slack included */
};

/* The latest float of a JSON column and where its text is in the text
 * buffer: a repeat is copied from the earlier row instead of formatted
 * again. CSV rows have no such memo: the row whose values all repeat is
 * copied whole (csv_values), and in real clients' reports (vkcube,
 * glmark2) no row repeated its ratios but not its counts, while the
 * memo's test cost rows 3 to 4 % on the H100's host (docs/benchmarks-history.md,
 * round sixteen). */
struct float_memo {
    uint64_t bits;
    uint64_t generation; /* the buffer's fill it was written in; 0: none */
    uint32_t at, length;
};

/* Neighbouring value columns of one kind. */
struct column_group {
    uint32_t first, count;
    enum column_kind kind;
};

/* An unsigned number's latest value and its text, when it is below 10^8:
 * a duration often repeats from one command to the next, and a repeat is
 * copied. */
struct column_text {
    uint64_t value;
    uint32_t length; /* 0: formatted by put_value each time */
    char text[32];   /* the text, and what the stores of whole registers wrote past it */
};

/* A command's end time and its text: the next command most often begins
 * when this one ended, and its begin_ns is then copied from here, in the
 * two pieces it was stored as. A time of 9 to 16 digits keeps its first
 * digits, end_ns / 10^8 (high_value), which change every 0.1 s: the next
 * such end_ns with the same first digits copies them. */
struct time_text {
    uint64_t value;
    uint32_t length;      /* 0: none kept */
    uint32_t high_length; /* of the text in high; low holds the rest */
    char high[8];         /* the first digits (up to 8), and what the stores wrote past them */
    char low[8];          /* the last 8 digits of a time of 9 to 16 */
    uint64_t high_value;  /* the quotient whose text high holds; UINT64_MAX: none */
};

/* A row's sequence and its text (up to 16 digits): the next row's, one
 * more, is the same text with 1 added to its last digit while that digit
 * has room (rows before it would pass '9'). */
struct sequence_text {
    uint64_t value;
    uint32_t length;            /* 0: none kept */
    uint32_t room;              /* 0 while none is kept */
    _Alignas(16) char text[16]; /* the digits, and what was stored past them */
    _Alignas(16) char bump[16]; /* 1 in the last digit's byte, 0 elsewhere */
};

/*
 * A report's entries for rows, each made once per struct row_way with the
 * way's parts inlined (report_write_base, report_write_ifma, ...; row_ways
 * picks one at open). The public entries reach theirs with one indirect jump
 * before any of its work, the ring's runs with one call per run.
 */
struct row_ways {
    tally_status (*write)(tally_report *, const tally_command_record *, const tally_value *);
    tally_status (*write_keyed)(tally_report *, const tally_command_record *, uint64_t,
                                const tally_value *);
    void (*csv_rows)(tally_report *, const struct segment *, const report_ring_run *);
};

struct tally_report {
    struct atomic_file file;
    struct segment segment;
    struct float_memo *floats;   /* JSON: per column */
    struct column_group *groups; /* CSV: the value columns by kind */
    uint32_t group_count;
    /* CSV: the counts' columns when the value columns are unsigned ones
     * then floats (a report's usual: counts, then ratios), float_columns of
     * them; else counts_then_floats is false and the groups are walked */
    bool counts_then_floats;
    uint32_t count_columns, float_columns;
    /* the fastest ways this processor has, or the baseline's (simd_baseline) */
    text_counts_fn put_counts; /* a row's counts */
    text_f64_pair_fn put_pair; /* a pair of float columns */
    /* CSV: the value columns are counts then two floats (a report's
     * usual: counts, then two ratios), and the ways are not the
     * baseline's: a row way with counts_pair writes them in one piece */
    bool counts_then_pair;
    const struct row_ways *rows;        /* the rows' entries (struct row_way) */
    struct time_text end_text;          /* CSV: the latest row's end_ns */
    struct sequence_text sequence_text; /* CSV: the latest row's sequence */
    /* CSV: the latest row's values (kept by csv_columns as it formats
     * them) and where their text is in the text buffer: a row that repeats
     * them (the same draw again) copies it. */
    tally_value *last_values;
    uint64_t last_generation; /* of the buffer fill the text is in; 0: none */
    size_t last_at, last_length;
    struct column_text duration_text; /* CSV: the latest row's duration_ns */
    tally_report_format format;
    const tally_catalogue *catalogue; /* lives as long as the process */
    bool wrote_record;                /* JSON: the next record needs a comma */
    /* TALLY_ERROR_IO once a write failed (seen when the text was
     * written), else TALLY_OK: what each row returns, as it is */
    tally_status written;
    /* Rows are formatted here and reach the file TEXT_BUFFER_SIZE at a time. */
    char *text;
    size_t used;
    uint64_t generation; /* counts the buffer's fills and large rows, from 1 */
    size_t keys_size;    /* JSON: the counters' "symbol": keys, summed */
    uint8_t *kinds;      /* enum column_kind, per column */
    char **keys;         /* JSON: each column's "symbol": key */
    uint32_t count;
    uint32_t counters[]; /* catalogue indices of the value columns */
};

static const struct row_ways *row_ways(bool baseline);

/* TALLY_REPORT_SIMD=baseline: the ways every processor of the architecture
 * has (SSE2 on x86-64) in place of the widest this one has, to compare
 * them, or to rule the wider ones out (docs/reports.md). */
static bool simd_baseline(void)
{
    const char *simd = secure_getenv("TALLY_REPORT_SIMD");
    return simd && strcmp(simd, "baseline") == 0;
}

static const char csv_record_header[] = "sequence,kind,api_name,context,context_api,frame,"
                                        "submission,stream,label,begin_ns,end_ns,duration_ns";

tally_report_format tally_report_format_for_path(const char *path)
{
    if (!path)
        return TALLY_REPORT_CSV;
    const char *base = strrchr(path, '/');
    const char *dot = strrchr(base ? base : path, '.');
    return dot && strcasecmp(dot, ".json") == 0 ? TALLY_REPORT_JSON : TALLY_REPORT_CSV;
}

static const tally_counter_info *column(const tally_report *r, uint32_t i)
{
    return tally_catalogue_counter(r->catalogue, r->counters[i]);
}

/* Quoted per RFC 4180 when it holds a comma, quote, CR or LF; quotes doubled. */
static void put_csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (const char *quote; (quote = strchr(s, '"')); s = quote + 1) {
        fwrite(s, 1, (size_t)(quote - s) + 1, out);
        putc('"', out);
    }
    fputs(s, out);
    putc('"', out);
}

/* Bytes from an earlier row, 8 at a time (the row's bound leaves room for
 * the last piece): the source ends before dst. */
static char *copy_earlier(char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i < n; i += 8)
        memcpy(dst + i, src + i, 8);
    return dst + n;
}

static inline char *put_float(tally_report *r, char *p, struct float_memo *memo, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (memo->generation == r->generation && memo->bits == bits)
        return copy_earlier(p, r->text + memo->at, memo->length);
    char *end = text_f64(p, v);
    *memo = (struct float_memo){.bits = bits,
                                .generation = r->generation,
                                .at = (uint32_t)((uintptr_t)p - (uintptr_t)r->text),
                                .length = (uint32_t)(end - p)};
    return end;
}

/* A value of a column that is not unsigned. JSON has no NaN or infinity,
 * so a non-finite float is written there as 0; CSV gets "nan", "inf",
 * "-inf". */
static __attribute__((noinline)) char *put_other(tally_report *r, char *p, uint32_t i,
                                                 tally_value v, bool json)
{
    if (r->kinds[i] == COLUMN_SIGNED)
        return text_i64(p, v.i64);
    if (json && !isfinite(v.f64)) {
        *p = '0';
        return p + 1;
    }
    return put_float(r, p, &r->floats[i], v.f64);
}

/* A value by its column's kind: most are unsigned, formatted inline. */
static inline char *put_value(tally_report *r, char *p, uint32_t i, tally_value v, bool json)
{
    if (r->kinds[i] == COLUMN_UNSIGNED)
        return text_u64(p, v.u64);
    return put_other(r, p, i, v, json);
}

static enum column_kind kind_of(tally_storage storage)
{
    switch (storage) {
    case TALLY_STORAGE_INT32:
    case TALLY_STORAGE_INT64: return COLUMN_SIGNED;
    case TALLY_STORAGE_FLOAT32:
    case TALLY_STORAGE_FLOAT64: return COLUMN_FLOAT;
    default: return COLUMN_UNSIGNED;
    }
}

/* Write errors are found here, not per row (ferror costs a lock). */
static char *put_literal(char *p, const char *text);

/* What the rows return from now on: TALLY_ERROR_IO once the file has
 * failed a write (flush_text, write_large_row). */
static void note_written(tally_report *r)
{
    r->written = atomic_file_failed(&r->file) ? TALLY_ERROR_IO : TALLY_OK;
}

static void flush_text(tally_report *r, bool all)
{
    /* Whole 4 KiB pages go straight to the file (O_DIRECT, no copy) where
     * it can take them; the rest moves to the buffer's start. */
    size_t pages = r->used & ~(size_t)(TEXT_PAGE - 1);
    if (pages && atomic_file_write_aligned(&r->file, r->text, pages)) {
        memmove(r->text, r->text + pages, r->used - pages);
        r->used -= pages;
    }
    if (all || r->used > TEXT_PAGE) {
        if (r->used)
            fwrite(r->text, 1, r->used, atomic_file_stream(&r->file));
        r->used = 0;
    }
    r->generation++; /* earlier rows' text is about to be overwritten or moved */
    note_written(r);
}

/* The headers are formatted into the text buffer, like the rows, so that
 * the rows' pages stay aligned in the file (flush_text); a header too large
 * for it (counters by the thousand) goes through the stream. */
static void write_csv_header(tally_report *r)
{
    size_t bound = sizeof csv_record_header + 2;
    for (uint32_t i = 0; i < r->count; i++)
        bound += TEXT_CSV_MAX(strlen(column(r, i)->symbol)) + 1;
    if (bound > TEXT_BUFFER_SIZE / 2) {
        FILE *out = atomic_file_stream(&r->file);
        fputs(csv_record_header, out);
        for (uint32_t i = 0; i < r->count; i++) {
            putc(',', out);
            put_csv_field(out, column(r, i)->symbol);
        }
        putc('\n', out);
        return;
    }
    char *p = put_literal(r->text + r->used, csv_record_header);
    for (uint32_t i = 0; i < r->count; i++) {
        const char *symbol = column(r, i)->symbol;
        *p++ = ',';
        p = text_csv_field(p, symbol, strlen(symbol));
    }
    *p++ = '\n';
    r->used = (size_t)(p - r->text);
}

/* The four strings of a record, measured once. */
struct record_strings {
    size_t kind, api_name, context_api, label;
};

static struct record_strings measure(const tally_command_record *record)
{
    return (struct record_strings){strlen(record->kind), strlen(record->api_name),
                                   strlen(record->context_api), strlen(record->label)};
}

/* Twelve record numbers and their separators, at most. */
#define RECORD_NUMBERS_MAX (12 * (TEXT_NUMBER_MAX + 1))

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define READS_PAST_STRINGS 0 /* the sanitizers check every byte a load touches */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define READS_PAST_STRINGS 0
#endif
#endif
#ifndef READS_PAST_STRINGS
#define READS_PAST_STRINGS 1
#endif

/*
 * Whether the record's four strings are the stored ones (their bytes and
 * NULs). When each stored string is below 32 bytes (most names of a report)
 * they are compared with their slots, 32 bytes of each in two SSE2 registers
 * and no branch, when those 32 bytes lie in one page, as strlen reads (a
 * load that does not cross a page can fault only where a byte of the string
 * would); the bytes past the stored string's NUL are ignored. Else strncmp:
 * exact, and it stops at the record's NUL.
 */

static bool same_strings_bytewise(const struct segment *g, const char *const strings[4])
{
    for (int i = 0; i < 4; i++)
        if (strncmp(g->strings + g->offsets[i], strings[i], g->lengths[i] + 1) != 0)
            return false;
    return true;
}

#if defined(TEXT_VECTOR) && READS_PAST_STRINGS
/* Whether each string's 32 bytes lie within a page: a first and last byte
 * in one page. */
static inline bool within_pages(const char *const strings[4])
{
    uintptr_t crossed = 0;
    for (int i = 0; i < 4; i++)
        crossed |= (uintptr_t)strings[i] ^ ((uintptr_t)strings[i] + 31);
    return (crossed & TEXT_PAGE) == 0;
}

/* The strings against the slots, their loads known to lie within pages:
 * every byte equal or ignored. */
static inline bool same_as_slots(const struct segment *g, const char *const strings[4])
{
    __m128i same = _mm_set1_epi8(-1);
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) {
#pragma GCC unroll 2
        for (int half = 0; half < 32; half += 16) {
            __m128i slot = _mm_load_si128((const __m128i *)(const void *)(g->slots[i] + half));
            __m128i ignored = _mm_load_si128((const __m128i *)(const void *)(g->ignored[i] + half));
            __m128i s = _mm_loadu_si128((const __m128i *)(const void *)(strings[i] + half));
            same = _mm_and_si128(same, _mm_or_si128(_mm_cmpeq_epi8(slot, s), ignored));
        }
    }
    return _mm_movemask_epi8(same) == 0xffff;
}

/* same_as_slots by AVX-512: the four strings' 32 bytes in two 64-byte
 * registers (a string's 32 bytes into either half), against the slots
 * and their ignored bytes, which lie the same way in the segment: about
 * 14 instructions for the four strings, where same_as_slots takes 35. */
TEXT_IFMA static inline __attribute__((always_inline)) bool
same_as_slots_ifma(const struct segment *g, const char *const strings[4])
{
    const char *slots = g->slots[0];
    const uint8_t *ignored = g->ignored[0];
    __m512i differ = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int i = 0; i < 4; i += 2) {
        /* unaligned loads: the slots are aligned to 16 bytes, not 64 */
        __m512i s = _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)strings[i])),
            _mm256_loadu_si256((const __m256i *)(const void *)strings[i + 1]), 1);
        __m512i slot = _mm512_loadu_si512((const void *)(slots + 32 * i));
        __m512i ignore = _mm512_loadu_si512((const void *)(ignored + 32 * i));
        /* differ | ((s ^ slot) & ~ignore) */
        differ = _mm512_ternarylogic_epi64(differ, _mm512_xor_si512(s, slot), ignore, 0xf4);
    }
    return _mm512_test_epi64_mask(differ, differ) == 0;
}
#endif

static inline bool same_strings(const struct segment *g, const char *const strings[4])
{
#if defined(TEXT_VECTOR) && READS_PAST_STRINGS
    if (g->short_strings && within_pages(strings))
        return same_as_slots(g, strings);
#endif
    return same_strings_bytewise(g, strings);
}

/* The record's frame, submission and stream (neighbours in it). */
static inline void record_numbers(const tally_command_record *record, uint64_t numbers[3])
{
    numbers[0] = record->frame;
    numbers[1] = record->submission;
    numbers[2] = record->stream;
}

static inline bool same_numbers_as(const struct segment *g, const tally_command_record *record)
{
    return ((g->numbers[0] ^ record->frame) | (g->numbers[1] ^ record->submission) |
            (g->numbers[2] ^ record->stream)) == 0;
}

/* Whether the record's numbers and strings are the segment's, and the
 * segment is valid and of compared strings. */
static inline bool segment_matches(const struct segment *g, const tally_command_record *record)
{
    if (g->context_state != record->context || !same_numbers_as(g, record))
        return false;
    const char *const strings[4] = {record->kind, record->api_name, record->context_api,
                                    record->label};
    return same_strings(g, strings);
}

/* A way of finding whether a record is of the segment, its pointers the
 * segment's (most rows of tally_report_write): false for any other record,
 * whose strings may be NULL. The rows' entries take one as a constant
 * (struct row_way). */
typedef bool segment_matches_fn(const struct segment *g, const tally_command_record *record);

/* The record's fields that struct segment's image holds: from api_name to
 * label, 64 bytes; the 32-bit lanes compared, all but context's padding. */
#define IMAGE_FIRST offsetof(tally_command_record, api_name)
#define IMAGE_AT(g, field)                                                                         \
    ((char *)(g)->image + offsetof(tally_command_record, field) - IMAGE_FIRST)
#define IMAGE_LANES                                                                                \
    ((uint16_t) ~(1u << ((offsetof(tally_command_record, context) + 4 - IMAGE_FIRST) / 4)))
_Static_assert(offsetof(tally_command_record, label) + sizeof(const char *) - IMAGE_FIRST ==
                   sizeof(((struct segment *)0)->image),
               "the image spans api_name to label");
_Static_assert(offsetof(tally_command_record, context_api) ==
                   offsetof(tally_command_record, context) + 8,
               "context is followed by 4 bytes of padding");

/* The image of no record (see struct segment). */
static void forget_image(struct segment *g)
{
    const char *own = (const char *)g->pointers;
    memset(g->image, 0, sizeof g->image);
    memcpy(IMAGE_AT(g, api_name), &own, sizeof own);
}

/* The image of the segment's pointers and numbers, and the record's context. */
static void set_image(struct segment *g, uint32_t context)
{
    forget_image(g);
    memcpy(IMAGE_AT(g, kind), &g->pointers[0], sizeof g->pointers[0]);
    memcpy(IMAGE_AT(g, api_name), &g->pointers[1], sizeof g->pointers[1]);
    memcpy(IMAGE_AT(g, context_api), &g->pointers[2], sizeof g->pointers[2]);
    memcpy(IMAGE_AT(g, label), &g->pointers[3], sizeof g->pointers[3]);
    memcpy(IMAGE_AT(g, context), &context, sizeof context);
    memcpy(IMAGE_AT(g, frame), &g->numbers[0], sizeof g->numbers[0]);
    memcpy(IMAGE_AT(g, submission), &g->numbers[1], sizeof g->numbers[1]);
    memcpy(IMAGE_AT(g, stream), &g->numbers[2], sizeof g->numbers[2]);
}

#if defined(TEXT_VECTOR) && READS_PAST_STRINGS
/* By SSE2: the pointers one by one, and the loads through the segment's
 * copy of them (gathered in an array, they cost a dozen shuffles). */
static inline __attribute__((always_inline)) bool
segment_matches_pointers(const struct segment *g, const tally_command_record *record)
{
    return g->context_state == record->context && same_numbers_as(g, record) &&
           record->kind == g->pointers[0] && record->api_name == g->pointers[1] &&
           record->context_api == g->pointers[2] && record->label == g->pointers[3] &&
           same_as_slots(g, g->pointers);
}

/* By AVX-512: the record's pointers and numbers against the segment's
 * image in one compare (where segment_matches_pointers takes about 20
 * instructions and five branches), then the strings. The load leaves out
 * context's padding, which a caller need not have set. */
TEXT_IFMA static inline __attribute__((always_inline)) bool
segment_matches_image(const struct segment *g, const tally_command_record *record)
{
    __m512i fields = _mm512_maskz_loadu_epi32(IMAGE_LANES, (const char *)record + IMAGE_FIRST);
    __m512i image = _mm512_loadu_si512((const void *)g->image);
    return _mm512_cmpneq_epu32_mask(fields, image) == 0 && same_as_slots_ifma(g, g->pointers);
}
#else
/* no compare of slots: every record goes to segment_for */
static inline bool segment_matches_pointers(const struct segment *g,
                                            const tally_command_record *record)
{
    (void)g;
    (void)record;
    return false;
}
#define segment_matches_image segment_matches_pointers
#endif

static bool grow(char **buffer, size_t *capacity, size_t needed)
{
    if (needed <= *capacity)
        return true;
    char *bigger = realloc(*buffer, needed);
    if (!bigger)
        return false;
    *buffer = bigger;
    *capacity = needed;
    return true;
}

static char *put_literal(char *p, const char *text)
{
    size_t n = strlen(text);
    memcpy(p, text, n);
    return p + n;
}

/* Whether the record's numbers are those of the segment, keyed or not. */
static bool same_numbers(const struct segment *g, const tally_command_record *record)
{
    return g->context_state != NO_SEGMENT && (uint32_t)g->context_state == record->context &&
           same_numbers_as(g, record);
}

/* The segment of this record, formatted anew (apart from the rows' path:
 * its frame and saved registers would cost every row). */
static __attribute__((noinline)) struct segment *make_segment(tally_report *r,
                                                              const tally_command_record *record)
{
    struct segment *g = &r->segment;
    struct record_strings measured = measure(record);
    const struct record_strings *n = &measured;
    g->context_state = NO_SEGMENT; /* matches no record until made */
    g->keyed = SEGMENT_COMPARED;
    for (int i = 0; i < 4; i++)
        g->pointers[i] = (const char *)g->pointers;
    forget_image(g);
    size_t total = n->kind + n->api_name + n->context_api + n->label + 4;
    size_t bound = 128 + RECORD_NUMBERS_MAX + TEXT_JSON_MAX(total);
    if (!grow(&g->strings, &g->strings_capacity, total) ||
        !grow(&g->text, &g->text_capacity, (bound + 15) & ~(size_t)15))
        return NULL;
    const char *strings[4] = {record->kind, record->api_name, record->context_api, record->label};
    size_t lengths[4] = {n->kind, n->api_name, n->context_api, n->label};
    char *at = g->strings;
    g->short_strings = true;
    memset(g->slots, 0, sizeof g->slots);
    memset(g->ignored, 0xff, sizeof g->ignored);
    for (int i = 0; i < 4; i++) {
        memcpy(at, strings[i], lengths[i] + 1);
        g->offsets[i] = (uint32_t)(at - g->strings);
        g->lengths[i] = lengths[i];
        at += lengths[i] + 1;
        bool in_slot = lengths[i] < 32;
        g->short_strings &= in_slot;
        if (!in_slot)
            continue;
        memcpy(g->slots[i], strings[i], lengths[i]);
        memset(g->ignored[i], 0, lengths[i] + 1);
    }
#if defined(TEXT_VECTOR) && READS_PAST_STRINGS
    if (g->short_strings && within_pages(strings))
        memcpy(g->pointers, strings, sizeof g->pointers);
#endif
    char *p = g->text;
    if (r->format == TALLY_REPORT_CSV) {
        *p++ = ',';
        p = text_csv_field(p, record->kind, n->kind);
        *p++ = ',';
        p = text_csv_field(p, record->api_name, n->api_name);
        *p++ = ',';
        p = text_u64(p, record->context);
        *p++ = ',';
        p = text_csv_field(p, record->context_api, n->context_api);
        *p++ = ',';
        p = text_u64(p, record->frame);
        *p++ = ',';
        p = text_u64(p, record->submission);
        *p++ = ',';
        p = text_u64(p, record->stream);
        *p++ = ',';
        p = text_csv_field(p, record->label, n->label);
        *p++ = ',';
    } else {
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
        p = put_literal(p, ",\"begin_ns\":");
    }
    g->text_length = (size_t)(p - g->text);
    g->row_bound = 128 + RECORD_NUMBERS_MAX + ((g->text_length + 15) & ~(size_t)15) + r->keys_size +
                   (size_t)r->count * (TEXT_NUMBER_MAX + 1) + TEXT_CSV_COUNTS_MAX(0);
    record_numbers(record, g->numbers);
    set_image(g, record->context);
    g->context_state = record->context; /* compared strings: state 0 */
    return g;
}

/* A segment made for a caller that keys its strings: tally_report_write
 * compares strings and makes its own. */
static void segment_keyed_by(struct segment *g, enum segment_keyed keyed)
{
    g->keyed = keyed;
    g->context_state = (uint32_t)g->context_state | (uint64_t)keyed << 32;
    forget_image(g);
}

/* The segment of this record, made when it differs from the last. Out of
 * line: the rows whose strings are the segment's pointers (nearly all)
 * then keep none of its registers nor its aligned array of strings. */
static __attribute__((noinline)) const struct segment *
segment_for(tally_report *r, const tally_command_record *record)
{
    const struct segment *g = &r->segment;
    if (segment_matches(g, record))
        return g;
    return make_segment(r, record);
}

/* 64 bytes from `from` to `to`: four 16-byte registers by SSE2 (all four
 * loaded before the stores, which the compiler must otherwise take to
 * change the source), one 64-byte register by AVX-512: one load and one
 * store where SSE2 takes eight. The rows' ways take one as a constant
 * (struct row_way). */
typedef void copy64_fn(char *to, const char *from);

static inline __attribute__((always_inline)) void copy64_sse2(char *to, const char *from)
{
#ifdef TEXT_VECTOR
    const __m128i *in = (const __m128i *)(const void *)from;
    __m128i a = _mm_loadu_si128(in), b = _mm_loadu_si128(in + 1);
    __m128i c = _mm_loadu_si128(in + 2), d = _mm_loadu_si128(in + 3);
    __m128i *out = (__m128i *)(void *)to;
    _mm_storeu_si128(out, a);
    _mm_storeu_si128(out + 1, b);
    _mm_storeu_si128(out + 2, c);
    _mm_storeu_si128(out + 3, d);
#else
    memmove(to, from, 64);
#endif
}

#ifdef TEXT_VECTOR
TEXT_IFMA static inline __attribute__((always_inline)) void copy64_avx512(char *to,
                                                                          const char *from)
{
    _mm512_storeu_si512((void *)to, _mm512_loadu_si512((const void *)from));
}
#endif

/* The segment's text: one of at most 64 bytes (most) as one copy64 (its
 * buffer holds at least 128 bytes, and the row's bound counts 128 bytes
 * more than the row); a longer one in 16-byte pieces (its buffer is
 * rounded up to 16 and the row's bound leaves room for the last piece). */
static inline __attribute__((always_inline)) char *put_segment(char *p, const struct segment *g,
                                                               copy64_fn *copy64)
{
    const char *text = g->text;
    size_t length = g->text_length;
    if (__builtin_expect(length <= 64, 1)) {
        copy64(p, text);
        return p + length;
    }
    for (size_t i = 0; i < length; i += 16)
        memcpy(p + i, text + i, 16);
    return p + length;
}

/*
 * A CSV row's value columns, a group of neighbouring columns of one kind at
 * a time: unsigned ones (most) several numbers at once by
 * text_csv_counts; floats two at a time (the pair's way), a last one alone
 * by text_f64; a signed one by text_i64.
 */
static __attribute__((noinline)) char *put_signed_group(char *p, const tally_value *values,
                                                        uint32_t n, tally_value *keep)
{
    for (uint32_t i = 0; i < n; i++) {
        keep[i] = values[i];
        *p++ = ',';
        p = text_i64(p, values[i].i64);
    }
    return p;
}

/* A CSV run of float columns, two at a time. A run of one pair (a
 * report's usual: two ratios) takes no loop, whose registers kept around
 * the call cost about 30 instructions. */
static inline __attribute__((always_inline)) char *
put_float_group(tally_report *r, char *p, const tally_value *v, tally_value *keep, uint32_t n)
{
    if (n == 2) {
        memcpy(keep, v, 2 * sizeof *v);
        return r->put_pair(p, v[0].f64, v[1].f64);
    }
    uint32_t i = 0;
    for (; i + 2 <= n; i += 2) {
        keep[i] = v[i];
        keep[i + 1] = v[i + 1];
        p = r->put_pair(p, v[i].f64, v[i + 1].f64);
    }
    if (i < n) {
        keep[i] = v[i];
        *p++ = ',';
        p = text_f64(p, v[i].f64);
    }
    return p;
}

/* At least one group (a report with columns). The values are kept in
 * last_values on the way (csv_values). counts_pair: a row way's, inlined
 * (struct row_way), or NULL. */
static inline __attribute__((always_inline)) char *
csv_columns(tally_report *r, char *p, const tally_value *values, text_counts_pair_fn counts_pair)
{
    if (counts_pair && __builtin_expect(r->counts_then_pair, 1)) /* a report's usual */
        return counts_pair(p, &values->u64, r->count_columns, &r->last_values->u64);
    if (r->counts_then_floats) { /* no walk of the groups */
        uint32_t n = r->count_columns;
        p = r->put_counts(p, &values->u64, n, &r->last_values->u64);
        return put_float_group(r, p, values + n, r->last_values + n, r->float_columns);
    }
    const struct column_group *g = r->groups, *end = g + r->group_count;
    do {
        const tally_value *v = values + g->first;
        tally_value *keep = r->last_values + g->first;
        if (g->kind == COLUMN_UNSIGNED)
            p = r->put_counts(p, &v->u64, g->count, &keep->u64);
        else if (g->kind == COLUMN_FLOAT)
            p = put_float_group(r, p, v, keep, g->count);
        else
            p = put_signed_group(p, v, g->count, keep);
    } while (++g < end);
    return p;
}

/* What the caller knows of a row's values against the previous row's. */
enum row_values {
    VALUES_UNKNOWN, /* compared here (tally_report_write, _keyed) */
    VALUES_SAME,    /* the ring's producer knows they repeat */
    VALUES_NEW,     /* ... or that they may not */
};

/* The value columns, or the previous row's text of them when this row's
 * values are the same (its text is in the buffer until the buffer is
 * written out). */
static inline __attribute__((always_inline)) char *csv_values(tally_report *r, char *restrict p,
                                                              const tally_value *restrict values,
                                                              enum row_values known,
                                                              text_counts_pair_fn counts_pair)
{
    size_t bytes = (size_t)r->count * sizeof *values;
    if (!bytes)
        return p; /* no value columns (and values may be NULL) */
    if (__builtin_expect(r->last_generation == r->generation, 1) &&
        (known == VALUES_SAME ||
         (known == VALUES_UNKNOWN && values[0].u64 == r->last_values[0].u64 &&
          memcmp(values, r->last_values, bytes) == 0))) {
        memcpy(p, r->text + r->last_at, r->last_length);
        return p + r->last_length;
    }
    char *start = p;
    p = csv_columns(r, p, values, counts_pair);
    r->last_generation = r->generation;
    r->last_at = (size_t)((uintptr_t)start - (uintptr_t)r->text);
    r->last_length = (size_t)(p - start);
    return p;
}

/* An unsigned number through a one-entry memo of its text (see csv_values). */
static inline __attribute__((always_inline)) char *put_memo_u64(char *p, struct column_text *m,
                                                                uint64_t v)
{
    if (v == m->value && m->length) {
        memcpy(p, m->text, 8);
        return p + m->length;
    }
    m->value = v;
    if (v >= 100000000u) {
        m->length = 0;
        return text_u64(p, v);
    }
    uint64_t text;
    m->length = text_below_1e8((uint32_t)v, &text);
    memcpy(p, &text, 8);
    memcpy(m->text, &text, 8);
    return p + m->length;
}

/* end_ns, kept for the next row's begin_ns when it has at most 16 digits
 * (stored from registers into both places). */
static inline char *put_end(char *p, struct time_text *t, uint64_t v)
{
    uint64_t high, low;
    unsigned length;
    if (v < 100000000u) {
        length = text_below_1e8((uint32_t)v, &high);
        memcpy(p, &high, 8);
        memcpy(t->high, &high, 8);
        t->high_length = length;
        t->high_value = UINT64_MAX; /* high holds the whole time */
    } else if (v < 10000000000000000u) {
        t->high_value = v / 100000000u;
        length = text_below_1e8((uint32_t)t->high_value, &high);
        low = text_digits8((uint32_t)(v % 100000000u)) + TEXT_ASCII_ZEROS;
        memcpy(p, &high, 8);
        memcpy(p + length, &low, 8);
        memcpy(t->high, &high, 8);
        memcpy(t->low, &low, 8);
        t->high_length = length;
        length += 8;
    } else {
        t->length = 0;
        return text_u64(p, v);
    }
    t->value = v;
    t->length = length;
    return p + length;
}

static inline __attribute__((always_inline)) char *put_begin(char *p, const struct time_text *t,
                                                             uint64_t v)
{
    uint32_t length = t->length; /* read once: the stores below may alias it */
    if (__builtin_expect(v != t->value || !length, 0))
        return text_u64(p, v);
    /* two 8-byte pieces, as put_end stored them: one 16-byte load across
     * both stores cannot take them from the store buffer and waits for
     * them to reach the cache (rows 2 % faster on the H100's host without
     * it, docs/benchmarks-history.md, round sixteen) */
    memcpy(p, t->high, 8);
    memcpy(p + t->high_length, t->low, 8);
    return p + length;
}

/* The sequence formatted, and kept for the next row's when it has at most
 * 16 digits. */
static __attribute__((noinline)) char *put_sequence_formatted(char *p, struct sequence_text *t,
                                                              uint64_t v)
{
    char *end = text_u64(p, v);
    size_t length = (size_t)(end - p);
    t->value = v;
    t->length = length <= sizeof t->text ? (uint32_t)length : 0;
    t->room = 0;
    if (t->length) {
        memcpy(t->text, p, sizeof t->text); /* the digits, and the row's bytes after them */
        memset(t->bump, 0, sizeof t->bump);
        t->bump[length - 1] = 1;
        t->room = (uint32_t)('9' - p[length - 1]);
    }
    return end;
}

#ifdef TEXT_VECTOR
/* The kept text plus one where its last digit is a 9 and an earlier digit
 * is not (one row in ten of consecutive sequences): the last digit that
 * is not a 9 plus one, and the 9s after it 0s, in one 16-byte register (the
 * bytes past the digits change too, and are written over). false where
 * every digit is a 9: the number grows a digit. */
static inline __attribute__((always_inline)) bool carry_sequence(char *p, struct sequence_text *t)
{
    __m128i text = _mm_load_si128((const __m128i *)(const void *)t->text);
    unsigned digits = (1u << t->length) - 1; /* length: 1 to 16 */
    unsigned nines = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(text, _mm_set1_epi8('9')));
    unsigned others = ~nines & digits;
    if (!others)
        return false;
    __m128i at = _mm_set1_epi8((char)(31 - __builtin_clz(others)));
    __m128i index = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m128i up = _mm_cmpeq_epi8(index, at); /* -1 there */
    __m128i after = _mm_and_si128(_mm_cmpgt_epi8(index, at), _mm_set1_epi8(9));
    text = _mm_sub_epi8(_mm_sub_epi8(text, up), after);
    _mm_storeu_si128((__m128i *)(void *)p, text);
    _mm_store_si128((__m128i *)(void *)t->text, text);
    t->room = 9; /* the last digit is a 0 now */
    return true;
}
#endif

/* A sequence one more than the previous row's (the engine's rows are
 * consecutive): the previous text with 1 added to its last digit, one
 * 16-byte addition, while that digit has room, else with the carry
 * (carry_sequence); else formatted. */
static inline __attribute__((always_inline)) char *put_sequence(char *p, struct sequence_text *t,
                                                                uint64_t v)
{
#ifdef TEXT_VECTOR
    if (__builtin_expect(v - 1 == t->value, 1)) {
        if (__builtin_expect(t->room != 0, 1)) { /* room: a text is kept */
            __m128i text = _mm_add_epi8(_mm_load_si128((const __m128i *)(const void *)t->text),
                                        _mm_load_si128((const __m128i *)(const void *)t->bump));
            _mm_storeu_si128((__m128i *)(void *)p, text);
            _mm_store_si128((__m128i *)(void *)t->text, text);
            t->value = v;
            t->room--;
            return p + t->length;
        }
        if (t->length && carry_sequence(p, t)) {
            t->value = v;
            return p + t->length;
        }
    }
#endif
    return put_sequence_formatted(p, t, v);
}

/*
 * The digits of a row's time (its low 8) and duration, both below 10^8, as
 * text_digits8x2 lays them out: a way per processor. The rows' functions
 * take the way as a constant argument and are made once per way (struct
 * row_ways), so that it is inlined: by IFMA (text_digits8x2_ifma) where
 * the processor has it, two multiplications deep where text_digits8x2's
 * splits are about six. Every later column's place waits on the
 * duration's length: in slices paired in time, rows ran 4.8 to 6.4 %
 * faster by IFMA on the H100's host and about 5 % here (docs/
 * benchmarks-history.md, round fifteen).
 */
#ifdef TEXT_VECTOR
typedef __m128i time_digits_fn(uint64_t low, uint64_t duration);

static inline __attribute__((always_inline)) __m128i time_digits_base(uint64_t low,
                                                                      uint64_t duration)
{
    return text_digits8x2(_mm_set_epi64x((long long)duration, (long long)low));
}

static const struct text_ifma_digits ifma_digits = TEXT_IFMA_DIGITS;

TEXT_IFMA static inline __attribute__((always_inline)) __m128i time_digits_ifma(uint64_t low,
                                                                                uint64_t duration)
{
    const struct text_ifma_digits *t = &ifma_digits;
    __asm__("" : "+r"(t)); /* the multipliers as memory operands (see lane_constants) */
    return text_digits8x2_ifma(low, duration, t);
}
#else
typedef void time_digits_fn(void); /* no vector way: the times one at a time */
#define time_digits_base ((time_digits_fn *)NULL)
#endif

/*
 * The text buffer's lines TEXT_AHEAD bytes past a row, fetched for writing
 * (PREFETCHW) while the row is formatted. Each fill of the buffer writes
 * over lines that its last write to the file took out of this core's
 * caches, and a row's stores otherwise wait for them. Three lines a row
 * (a 15-counter row is about 196 bytes). In slices paired in time, rows
 * ran 7 to 8 % faster here with 2 to 8 KiB ahead, and 2.5 to 3 % faster
 * on the H100's host (docs/benchmarks-history.md, round sixteen); the base way's
 * rows about 2 % faster here. The ways whose processors have PREFETCHW
 * prefetch: IFMA's (every IFMA processor has it), AVX2's (made for
 * processors with AVX2 and PREFETCHW: avx2_way) and the base way's made
 * again for processors that have it (prefetch_way).
 */
enum { TEXT_AHEAD = 4096 };

/* A way of the rows' functions: each is given one as a constant, and its
 * parts are inlined (struct row_ways). */
struct row_way {
    time_digits_fn *time_digits;
    segment_matches_fn *segment_matches;
    copy64_fn *copy64;
    bool prefetch; /* PREFETCHW: processors of the way have it */
    /* a report's counts then its pair (counts_then_pair) in one piece, or
     * NULL: they are written by put_counts and put_pair */
    text_counts_pair_fn counts_pair;
};

static const struct row_way base_way = {time_digits_base, segment_matches_pointers, copy64_sse2,
                                        false, NULL};
#ifdef TEXT_VECTOR
static const struct row_way prefetch_way = {time_digits_base, segment_matches_pointers, copy64_sse2,
                                            true, NULL};
static const struct row_way avx2_way = {time_digits_base, segment_matches_pointers, copy64_sse2,
                                        true, text_counts_then_pair_avx2};
static const struct row_way ifma_way = {time_digits_ifma, segment_matches_image, copy64_avx512,
                                        true, text_counts_then_pair_ifma};
#endif

/* The lines TEXT_AHEAD past row, for writing where the way has PREFETCHW
 * (the compiler emits it in functions whose target has it). */
static inline __attribute__((always_inline)) void prefetch_ahead(const struct row_way *way,
                                                                 char *row)
{
    if (!way->prefetch)
        return;
    __builtin_prefetch(row + TEXT_AHEAD, 1, 3);
    __builtin_prefetch(row + TEXT_AHEAD + 64, 1, 3);
    __builtin_prefetch(row + TEXT_AHEAD + 128, 1, 3);
}

#ifdef TEXT_VECTOR
/* The text of a time's first digits, high (below 10^8), kept in t. Out
 * of line: it changes every 0.1 s of the times. */
static __attribute__((noinline)) void put_time_high(struct time_text *t, uint64_t high)
{
    uint64_t text;
    t->high_length = text_below_1e8((uint32_t)high, &text);
    memcpy(t->high, &text, 8);
    t->high_value = high;
}

/* ",", then the duration's text, from its lane of text_digits8x2's digits. */
static inline char *put_duration_lane(char *p, __m128i digits, unsigned nonzero)
{
    unsigned skip = (unsigned)__builtin_ctz((nonzero >> 8) | 0x80);
    __m128i ascii = _mm_add_epi8(digits, _mm_set1_epi8('0'));
    uint64_t text = (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(ascii, ascii)) >> (8 * skip);
    *p = ',';
    memcpy(p + 1, &text, 8);
    return p + 1 + (8 - skip);
}
#endif

/*
 * end_ns, ",", duration_ns. The common case, a time of 9 to 16 digits and a
 * duration below 10^8, takes one text_digits8x2 for the time's low 8 digits
 * and the duration together; the time's high digits change every 0.1 s and
 * are kept as text (high_text). The time's text is kept for the next row's
 * begin_ns (put_begin), as put_end keeps it.
 */
static inline __attribute__((always_inline)) char *put_end_and_duration(tally_report *r, char *p,
                                                                        uint64_t end_ns,
                                                                        uint64_t duration,
                                                                        time_digits_fn *time_digits)
{
#ifdef TEXT_VECTOR
    if (__builtin_expect(
            end_ns >= 100000000u && end_ns < 10000000000000000u && duration < 100000000u, 1)) {
        uint64_t high = end_ns / 100000000u;
        uint64_t low = end_ns - high * 100000000u; /* below 10^8, broadcast whole */
        struct time_text *t = &r->end_text;
        if (__builtin_expect(high != t->high_value, 0))
            put_time_high(t, high);
        memcpy(p, t->high, 8);
        __m128i digits = time_digits(low, duration);
        unsigned nonzero = ~text_zero_digits(digits);
        uint64_t low_text = (uint64_t)_mm_cvtsi128_si64(_mm_add_epi8(digits, _mm_set1_epi8('0')));
        memcpy(p + t->high_length, &low_text, 8);
        memcpy(t->low, &low_text, 8);
        t->value = end_ns;
        t->length = t->high_length + 8;
        return put_duration_lane(p + t->length, digits, nonzero);
    }
#else
    (void)time_digits;
#endif
    p = put_end(p, &r->end_text, end_ns);
    *p++ = ',';
    return put_memo_u64(p, &r->duration_text, duration);
}

/* known: what the caller knows of the values (csv_values); way: a
 * constant. */
static inline __attribute__((always_inline)) char *
csv_row(tally_report *r, char *p, const struct segment *g, uint64_t sequence, uint64_t begin_ns,
        uint64_t end_ns, const tally_value *values, enum row_values known,
        const struct row_way *way)
{
    p = put_sequence(p, &r->sequence_text, sequence);
    p = put_segment(p, g, way->copy64);
    p = put_begin(p, &r->end_text, begin_ns);
    *p++ = ',';
    p = put_end_and_duration(r, p, end_ns,
                             __builtin_expect(end_ns >= begin_ns, 1) ? end_ns - begin_ns : 0,
                             way->time_digits);
    p = csv_values(r, p, values, known, way->counts_pair);
    *p++ = '\n';
    return p;
}

static void write_json_header(tally_report *r)
{
    size_t bound = 64;
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *counter = column(r, i);
        bound += TEXT_JSON_MAX(strlen(counter->symbol)) + 32 +
                 TEXT_JSON_MAX(counter->unit_name ? strlen(counter->unit_name) : 0);
    }
    if (bound > TEXT_BUFFER_SIZE / 2) {
        FILE *out = atomic_file_stream(&r->file);
        fputs("{\"counters\":[", out);
        for (uint32_t i = 0; i < r->count; i++) {
            const tally_counter_info *counter = column(r, i);
            fputs(i ? ",{\"symbol\":" : "{\"symbol\":", out);
            report_put_json_string(r->file.stream, counter->symbol);
            fputs(",\"unit\":", out);
            report_put_json_string(r->file.stream, counter->unit_name ? counter->unit_name : "");
            putc('}', out);
        }
        fputs("],\n\"commands\":[", out);
        return;
    }
    char *p = put_literal(r->text + r->used, "{\"counters\":[");
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *counter = column(r, i);
        const char *unit = counter->unit_name ? counter->unit_name : "";
        p = put_literal(p, i ? ",{\"symbol\":" : "{\"symbol\":");
        p = text_json_string(p, counter->symbol, strlen(counter->symbol));
        p = put_literal(p, ",\"unit\":");
        p = text_json_string(p, unit, strlen(unit));
        *p++ = '}';
    }
    p = put_literal(p, "],\n\"commands\":[");
    r->used = (size_t)(p - r->text);
}

static inline char *json_row(tally_report *r, char *p, const struct segment *g, uint64_t sequence,
                             uint64_t begin_ns, uint64_t end_ns, const tally_value *values)
{
    p = put_literal(p, r->wrote_record ? ",\n{\"sequence\":" : "\n{\"sequence\":");
    r->wrote_record = true;
    p = text_u64(p, sequence);
    p = put_segment(p, g, copy64_sse2);
    p = text_u64(p, begin_ns);
    p = put_literal(p, ",\"end_ns\":");
    p = text_u64(p, end_ns);
    p = put_literal(p, ",\"duration_ns\":");
    p = text_u64(p, end_ns >= begin_ns ? end_ns - begin_ns : 0);
    p = put_literal(p, ",\"values\":{");
    for (uint32_t i = 0; i < r->count; i++) {
        if (i)
            *p++ = ',';
        p = put_literal(p, r->keys[i]);
        p = put_value(r, p, i, values[i], true);
    }
    *p++ = '}';
    *p++ = '}';
    return p;
}

static char *any_row(tally_report *r, char *p, const struct segment *g, uint64_t sequence,
                     uint64_t begin_ns, uint64_t end_ns, const tally_value *values)
{
    return r->format == TALLY_REPORT_JSON
               ? json_row(r, p, g, sequence, begin_ns, end_ns, values)
               : csv_row(r, p, g, sequence, begin_ns, end_ns, values, VALUES_UNKNOWN, &base_way);
}

/* A row too large for the text buffer (a label of megabytes; the buffer
 * keeps up to a page that flush_text has not written), formatted
 * into an allocation of its own and written at once. */
static tally_status write_large_row(tally_report *r, const struct segment *g, uint64_t sequence,
                                    uint64_t begin_ns, uint64_t end_ns, const tally_value *values)
{
    flush_text(r, true);
    char *own = malloc(g->row_bound);
    if (!own)
        return TALLY_ERROR_OUT_OF_MEMORY;
    char *end = any_row(r, own, g, sequence, begin_ns, end_ns, values);
    r->generation++; /* the memos the row made point into own, not the buffer */
    fwrite(own, 1, (size_t)(end - own), atomic_file_stream(&r->file));
    free(own);
    note_written(r);
    return TALLY_OK;
}

static inline __attribute__((always_inline)) tally_status
write_row(tally_report *r, const struct segment *g, uint64_t sequence, uint64_t begin_ns,
          uint64_t end_ns, const tally_value *values)
{
    if (g->row_bound > TEXT_BUFFER_SIZE - TEXT_PAGE)
        return write_large_row(r, g, sequence, begin_ns, end_ns, values);
    if (r->used + g->row_bound > TEXT_BUFFER_SIZE - TEXT_PAGE)
        flush_text(r, false);
    char *start = r->text + r->used;
    r->used += (size_t)(any_row(r, start, g, sequence, begin_ns, end_ns, values) - start);
    return TALLY_OK;
}

static tally_status check_counters(const tally_catalogue *catalogue, const uint32_t *counters,
                                   uint32_t count)
{
    uint32_t known = tally_catalogue_counter_count(catalogue);
    for (uint32_t i = 0; i < count; i++) {
        if (counters[i] >= known || !tally_catalogue_counter(catalogue, counters[i]))
            return TALLY_ERROR_UNKNOWN_COUNTER;
    }
    return TALLY_OK;
}

/* aligned to its size, for a huge page (and atomic_file_write_aligned) */
static char *new_text_buffer(void)
{
    void *text = NULL;
    if (posix_memalign(&text, TEXT_ALLOCATION, TEXT_ALLOCATION) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(text, TEXT_ALLOCATION, MADV_HUGEPAGE); /* a hint: refused, small pages serve */
#endif
    return text;
}

static void free_report(tally_report *r)
{
    if (r->keys)
        for (uint32_t i = 0; i < r->count; i++)
            free(r->keys[i]);
    free(r->keys);
    free(r->kinds);
    free(r->floats);
    free(r->groups);
    free(r->last_values);
    free(r->segment.strings);
    free(r->segment.text);
    free(r->text);
    free(r);
}

/* Each column's kind and JSON key, worked out once. */
static bool prepare_columns(tally_report *r)
{
    r->kinds = calloc(r->count + 1, sizeof *r->kinds);
    r->keys = calloc(r->count + 1, sizeof *r->keys);
    r->floats = calloc(r->count + 1, sizeof *r->floats);
    r->groups = calloc(r->count + 1, sizeof *r->groups);
    r->last_values = calloc(r->count + 1, sizeof *r->last_values);
    if (!r->kinds || !r->keys || !r->floats || !r->groups || !r->last_values)
        return false;
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *counter = column(r, i);
        r->kinds[i] = (uint8_t)kind_of(counter->storage);
        struct column_group *g = &r->groups[r->group_count - (r->group_count > 0)];
        if (r->group_count && g->kind == r->kinds[i]) {
            g->count++;
        } else {
            r->groups[r->group_count++] =
                (struct column_group){.first = i, .count = 1, .kind = r->kinds[i]};
        }
        size_t n = strlen(counter->symbol);
        if (!(r->keys[i] = malloc(TEXT_JSON_MAX(n) + 2)))
            return false;
        char *end = text_json_string(r->keys[i], counter->symbol, n);
        *end++ = ':';
        *end = '\0';
        r->keys_size += (size_t)(end - r->keys[i]) + 1;
    }
    const struct column_group *g = r->groups;
    r->counts_then_floats = r->group_count >= 1 && r->group_count <= 2 &&
                            g[0].kind == COLUMN_UNSIGNED &&
                            (r->group_count == 1 || g[1].kind == COLUMN_FLOAT);
    if (r->counts_then_floats) {
        r->count_columns = g[0].count;
        r->float_columns = r->group_count == 2 ? g[1].count : 0;
    }
    return true;
}

static tally_report *new_report(tally_report_format format, const tally_catalogue *catalogue,
                                const uint32_t *counters, uint32_t count)
{
    tally_report *r = calloc(1, sizeof *r + (size_t)count * sizeof r->counters[0]);
    if (!r)
        return NULL;
    r->format = format;
    r->catalogue = catalogue;
    r->count = count;
    if (count)
        memcpy(r->counters, counters, (size_t)count * sizeof r->counters[0]);
    r->generation = 1;
    r->written = TALLY_OK;
    r->segment.context_state = NO_SEGMENT;
    forget_image(&r->segment);
    bool baseline = simd_baseline();
    r->put_counts = baseline ? text_csv_counts_baseline() : text_csv_counts_best();
    r->put_pair = baseline ? text_csv_f64_pair_baseline() : text_csv_f64_pair_best();
    r->rows = row_ways(baseline);
    r->duration_text.value = UINT64_MAX; /* with length 0: none kept */
    r->end_text.high_value = UINT64_MAX; /* not a quotient of a time below 10^16 */
    r->text = new_text_buffer();
    if (!r->text || !prepare_columns(r)) {
        free_report(r);
        return NULL;
    }
    r->counts_then_pair = !baseline && r->counts_then_floats && r->float_columns == 2;
    return r;
}

tally_status tally_report_open(const char *path, tally_report_format format,
                               const tally_catalogue *catalogue, const uint32_t *counters,
                               uint32_t count, tally_report **out)
{
    if (out)
        *out = NULL;
    if (!path || !catalogue || !out || (count && !counters))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (format != TALLY_REPORT_CSV && format != TALLY_REPORT_JSON)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_status status = check_counters(catalogue, counters, count);
    if (status != TALLY_OK)
        return status;
    tally_report *r = new_report(format, catalogue, counters, count);
    if (!r)
        return TALLY_ERROR_OUT_OF_MEMORY;
    status = atomic_file_open(&r->file, path);
    if (status != TALLY_OK) {
        free_report(r);
        return status;
    }
    if (format == TALLY_REPORT_JSON)
        write_json_header(r);
    else
        write_csv_header(r);
    if (atomic_file_failed(&r->file)) {
        atomic_file_abort(&r->file);
        free_report(r);
        return TALLY_ERROR_IO;
    }
    *out = r;
    return TALLY_OK;
}

/* A record's row, and the status the writes so far leave: a CSV row that
 * fits the buffer (the rows' path) in line. */
static inline __attribute__((always_inline)) tally_status
write_record(tally_report *r, const struct segment *g, const tally_command_record *record,
             const tally_value *values, const struct row_way *way)
{
    if (__builtin_expect(r->format == TALLY_REPORT_CSV, 1) &&
        r->used + g->row_bound <= TEXT_BUFFER_SIZE - TEXT_PAGE) {
        char *start = r->text + r->used;
        prefetch_ahead(way, start);
        char *end = csv_row(r, start, g, record->sequence, record->begin_ns, record->end_ns, values,
                            VALUES_UNKNOWN, way);
        r->used += (size_t)(end - start);
    } else {
        tally_status s =
            write_row(r, g, record->sequence, record->begin_ns, record->end_ns, values);
        if (s != TALLY_OK)
            return s;
    }
    return r->written;
}

static bool has_strings(const tally_command_record *record)
{
    return record->api_name && record->kind && record->context_api && record->label;
}

/* The public entries are made once per struct row_way, each whole: a
 * dispatch past their start would keep its registers twice. They are
 * reached through report->rows, so report is never NULL here. */
static inline __attribute__((always_inline)) tally_status
report_write(tally_report *report, const tally_command_record *record, const tally_value *values,
             const struct row_way *way)
{
    if (!record || (!values && report->count))
        return TALLY_ERROR_INVALID_ARGUMENT;
    const struct segment *g = &report->segment;
    if (!way->segment_matches(g, record)) {
        if (!has_strings(record))
            return TALLY_ERROR_INVALID_ARGUMENT;
        g = segment_for(report, record);
        if (!g)
            return TALLY_ERROR_OUT_OF_MEMORY;
    }
    return write_record(report, g, record, values, way);
}

/* The caller's key stands for the four strings (report.h): the segment is
 * made again only when the key or a number differs. */
static inline __attribute__((always_inline)) tally_status
report_write_keyed(tally_report *report, const tally_command_record *record, uint64_t strings_key,
                   const tally_value *values, const struct row_way *way)
{
    if (!record || !has_strings(record) || (report->count && !values))
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct segment *g = &report->segment;
    if (g->keyed != SEGMENT_CALLER_KEYED || g->key != strings_key || !same_numbers(g, record)) {
        if (!make_segment(report, record))
            return TALLY_ERROR_OUT_OF_MEMORY;
        segment_keyed_by(g, SEGMENT_CALLER_KEYED);
        g->key = strings_key;
    }
    return write_record(report, g, record, values, way);
}

tally_status tally_report_write(tally_report *report, const tally_command_record *record,
                                const tally_value *values)
{
    if (!report)
        return TALLY_ERROR_INVALID_ARGUMENT;
    return report->rows->write(report, record, values);
}

tally_status tally_report_write_keyed(tally_report *report, const tally_command_record *record,
                                      uint64_t strings_key, const tally_value *values)
{
    if (!report)
        return TALLY_ERROR_INVALID_ARGUMENT;
    return report->rows->write_keyed(report, record, strings_key, values);
}

/* The run's rows in a loop of their own per format: the segment, the
 * bound and the format are the same for all of them. */
static inline __attribute__((always_inline)) void csv_rows(tally_report *r, const struct segment *g,
                                                           const report_ring_run *run,
                                                           const struct row_way *way)
{
    for (uint32_t i = 0; i < run->count; i++) {
        const report_ring_row *row = report_ring_run_row(run, i);
        if (r->used + g->row_bound > TEXT_BUFFER_SIZE - TEXT_PAGE)
            flush_text(r, false);
        char *start = r->text + r->used;
        prefetch_ahead(way, start);
        char *end =
            csv_row(r, start, g, row->sequence & ~REPORT_RING_SAME_VALUES, row->begin_ns,
                    row->end_ns, row->values, row->sequence >> 63 ? VALUES_SAME : VALUES_NEW, way);
        r->used += (size_t)(end - start);
    }
}

/* The entries of a struct row_way (target: the attribute its processors
 * allow), and the ways. */
#define ROW_ENTRIES(name, target, way)                                                             \
    target static __attribute__((noinline)) tally_status report_write_##name(                      \
        tally_report *report, const tally_command_record *record, const tally_value *values)       \
    {                                                                                              \
        return report_write(report, record, values, way);                                          \
    }                                                                                              \
    target static __attribute__((noinline)) tally_status report_write_keyed_##name(                \
        tally_report *report, const tally_command_record *record, uint64_t strings_key,            \
        const tally_value *values)                                                                 \
    {                                                                                              \
        return report_write_keyed(report, record, strings_key, values, way);                       \
    }                                                                                              \
    target static __attribute__((noinline)) void csv_rows_##name(                                  \
        tally_report *r, const struct segment *g, const report_ring_run *run)                      \
    {                                                                                              \
        csv_rows(r, g, run, way);                                                                  \
    }                                                                                              \
    static const struct row_ways name##_rows = {report_write_##name, report_write_keyed_##name,    \
                                                csv_rows_##name};

ROW_ENTRIES(base, , &base_way)
#ifdef TEXT_VECTOR
ROW_ENTRIES(prefetch, TEXT_PRFCHW, &prefetch_way)
ROW_ENTRIES(avx2, TEXT_AVX2_PRFCHW, &avx2_way)
ROW_ENTRIES(ifma, TEXT_IFMA, &ifma_way)
#endif

/* The best way, or the baseline's (simd_baseline). */
static const struct row_ways *row_ways(bool baseline)
{
#ifdef TEXT_VECTOR
    if (!baseline && text_cpu_has_ifma())
        return &ifma_rows;
    if (!baseline && text_cpu_has_avx2() && text_cpu_has_prfchw())
        return &avx2_rows;
    if (text_cpu_has_prfchw()) /* not a SIMD way: the baseline's too */
        return &prefetch_rows;
#else
    (void)baseline;
#endif
    return &base_rows;
}

static void json_rows(tally_report *r, const struct segment *g, const report_ring_run *run)
{
    for (uint32_t i = 0; i < run->count; i++) {
        const report_ring_row *row = report_ring_run_row(run, i);
        if (r->used + g->row_bound > TEXT_BUFFER_SIZE - TEXT_PAGE)
            flush_text(r, false);
        char *start = r->text + r->used;
        char *end = json_row(r, start, g, row->sequence & ~REPORT_RING_SAME_VALUES, row->begin_ns,
                             row->end_ns, row->values);
        r->used += (size_t)(end - start);
    }
}

tally_status report_write_run(tally_report *report, const report_ring_run *run)
{
    const tally_command_record *record = run->record;
    struct segment *g = &report->segment;
    if (g->keyed != SEGMENT_RUN_KEYED || g->key != run->strings_key || g->kind != record->kind ||
        g->api_name != record->api_name || !same_numbers(g, record)) {
        if (!make_segment(report, record))
            return TALLY_ERROR_OUT_OF_MEMORY;
        segment_keyed_by(g, SEGMENT_RUN_KEYED);
        g->key = run->strings_key;
        g->kind = record->kind;
        g->api_name = record->api_name;
    }
    if (g->row_bound > TEXT_BUFFER_SIZE - TEXT_PAGE) {
        for (uint32_t i = 0; i < run->count; i++) {
            const report_ring_row *row = report_ring_run_row(run, i);
            tally_status s = write_large_row(report, g, row->sequence & ~REPORT_RING_SAME_VALUES,
                                             row->begin_ns, row->end_ns, row->values);
            if (s != TALLY_OK)
                return s;
        }
    } else if (report->format == TALLY_REPORT_JSON) {
        json_rows(report, g, run);
    } else {
        report->rows->csv_rows(report, g, run);
    }
    return report->written;
}

tally_status tally_report_close(tally_report *report)
{
    if (!report)
        return TALLY_ERROR_INVALID_ARGUMENT;
    flush_text(report, true);
    if (report->format == TALLY_REPORT_JSON)
        fputs("\n]}\n", atomic_file_stream(&report->file));
    tally_status status = atomic_file_commit(&report->file);
    free_report(report);
    return status;
}
