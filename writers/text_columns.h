/* A report row's runs of unsigned columns as CSV text, several numbers at a
 * time. Internal to libtally. */
#ifndef TALLY_TEXT_COLUMNS_H
#define TALLY_TEXT_COLUMNS_H

#include <stdint.h>

/* Most bytes a text_counts_fn writes for n values, with what its stores of
 * whole registers may write past the end it returns. */
#define TEXT_CSV_COUNTS_MAX(n) ((size_t)(n)*21 + 64)

/* ",v" for each of the n values, v as "%" PRIu64 writes it; returns the end.
 * The values are copied to keep on the way (the report's memo of a row's
 * values: a store per register the values are loaded in, where a copy of
 * its own costs the row a memcpy call). */
typedef char *(*text_counts_fn)(char *p, const uint64_t *restrict values, uint32_t n,
                                uint64_t *restrict keep);

/* The fastest this processor runs, chosen once; the fastest every
 * processor of the architecture runs (two at a time on x86-64). */
text_counts_fn text_csv_counts_best(void);
text_counts_fn text_csv_counts_baseline(void);

/* Each way, for tests that hold them to printf: one number at a time, two
 * at a time (SSE2, x86-64), four at a time (AVX2) and eight by one byte
 * compression (AVX-512F, BW and VBMI2); NULL where the processor lacks what
 * a way needs. The best is the compression, then four, two, one at a time.
 * The vector ways write a number below 2^23 (nearly every count of a
 * report) without a branch of its own and check a run once; a run holding
 * a larger number is written again, group by group, larger numbers one at
 * a time. Eight a group rather than four took fewer instructions and, from
 * round sixteen, wrote whole rows faster too (docs/benchmarks-history.md, rounds
 * nine, twelve and sixteen). */
char *text_csv_counts_scalar(char *p, const uint64_t *restrict values, uint32_t n,
                             uint64_t *restrict keep);
text_counts_fn text_csv_counts_pairs(void);
text_counts_fn text_csv_counts_quads(void);
text_counts_fn text_csv_counts_compressed(void);

/*
 * A report row's usual value columns, n counts then two doubles (counts,
 * then two ratios), in one call: the counts as a text_counts_fn writes
 * them, then the doubles (their bits in values[n] and values[n + 1], kept
 * too) as a text_f64_pair_fn. The ways, each NULL where this processor
 * lacks it: four counts at a time then the pair by AVX2, or eight by
 * compression then the pair by IFMA (text_counts.h; docs/benchmarks-history.md,
 * rounds seventeen and nineteen); the best of them. The report's AVX2 and
 * IFMA row entries have the same inline, with no call (rounds eighteen and
 * nineteen); these functions hold them for the tests.
 */
typedef char *(*text_counts_pair_fn)(char *p, const uint64_t *restrict values, uint32_t n,
                                     uint64_t *restrict keep);
text_counts_pair_fn text_csv_counts_pair_avx2(void);
text_counts_pair_fn text_csv_counts_pair_ifma(void);
text_counts_pair_fn text_csv_counts_pair_best(void);

#endif
