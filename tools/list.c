/* tally list: the catalogue of a backend as a table, whole or in one API's
 * vocabulary, or as the Metrics-Discovery-style API enumerates it (--md). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <tally/tally.h>

#include "tally_cli.h"

static void usage(FILE *out)
{
    fputs("usage: tally list [--backend NAME] [--api vk|gl|cl|md] [--groups|--sets|--md]\n"
          "\n"
          "The counter catalogue of a backend (default: TALLY_BACKEND, else simgpu).\n"
          "\n"
          "  --backend NAME   simgpu, or driver: every counter the driver backend can\n"
          "                   measure (a device offers those its front door can)\n"
          "  --api API        symbols and names in one API's vocabulary\n"
          "  --groups         the counter groups and their capacity per pass\n"
          "  --sets           the metric sets and their counters\n"
          "  --md             the device as the Metrics-Discovery-style API shows it\n"
          "  -h, --help       this text\n",
          out);
}

/* The backend's name, or NULL after saying that it is none. */
static const char *parse_backend(const char *name)
{
    const char *const *names = tally_backend_names();
    char known[128] = "";
    for (size_t i = 0; names[i]; i++) {
        if (strcmp(name, names[i]) == 0)
            return name;
        const char *separator = i == 0 ? "" : names[i + 1] ? ", " : " or ";
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", separator, names[i]);
    }
    fprintf(stderr, "tally list: --backend: no backend named \"%s\" (%s)\n", name, known);
    return NULL;
}

static int parse_api(const char *name, int *api)
{
    for (int a = 0; a < TALLY_API_COUNT; a++) {
        if (strcmp(name, tally_api_string((tally_api)a)) == 0) {
            *api = a;
            return 0;
        }
    }
    fprintf(stderr, "tally list: --api: no API named \"%s\" (vk, gl, cl or md)\n", name);
    return -1;
}

static void list_counters(const tally_catalogue *cat, int api)
{
    printf("%-24s %-36s %-18s %-12s %-8s %s\n", "SYMBOL", "NAME", "GROUP", "UNIT", "STORAGE",
           "KIND");
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        const char *symbol = api < 0 ? c->symbol : tally_counter_symbol_for(c, (tally_api)api);
        const char *name = api < 0 ? c->name : tally_counter_name_for(c, (tally_api)api);
        const char *unit = api < 0 ? c->unit_name : tally_counter_unit_name_for(c, (tally_api)api);
        printf("%-24s %-36s %-18s %-12s %-8s %s\n", symbol, name,
               tally_catalogue_group(cat, c->group)->symbol, unit, tally_storage_string(c->storage),
               c->raw_index == TALLY_NOT_RAW ? "derived"
               : c->exact                    ? "exact"
               : c->exact_when               ? "conditional"
               : c->measured                 ? "measured"
                                             : "modeled");
    }
    /* What "conditional" means, counter by counter. */
    bool first = true;
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        const tally_counter_info *c = tally_catalogue_counter(cat, i);
        if (!c->exact_when)
            continue;
        if (first)
            printf("\nconditional: exact when, else modeled\n");
        first = false;
        printf("  %s: %s\n", api < 0 ? c->symbol : tally_counter_symbol_for(c, (tally_api)api),
               c->exact_when);
    }
}

static void list_groups(const tally_catalogue *cat)
{
    printf("%-18s %-36s %8s %8s\n", "GROUP", "NAME", "COUNTERS", "CAPACITY");
    for (uint32_t i = 0; i < tally_catalogue_group_count(cat); i++) {
        const tally_group_info *g = tally_catalogue_group(cat, i);
        printf("%-18s %-36s %8u %8u\n", g->symbol, g->name, g->counter_count, g->capacity);
    }
}

static void list_sets(const tally_catalogue *cat)
{
    for (uint32_t i = 0; i < tally_catalogue_metric_set_count(cat); i++) {
        const tally_metric_set_info *s = tally_catalogue_metric_set(cat, i);
        printf("%s (%s, concurrent group %s):", s->symbol, s->short_name,
               tally_catalogue_concurrent_group(cat, s->concurrent_group)->symbol);
        for (uint32_t k = 0; k < s->counter_count; k++)
            printf(" %s", tally_catalogue_counter(cat, s->counters[k])->symbol);
        printf("\n");
    }
}

static const char *value_type_name(tally_md_value_type type)
{
    static const char *const names[] = {"uint32", "uint64", "float", "bool", "cstring", "double"};
    return (unsigned)type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

static void print_symbol(const tally_md_global_symbol *symbol)
{
    const tally_md_typed_value *v = &symbol->value;
    printf("  %-28s ", symbol->symbol_name);
    if (v->type == TALLY_MD_VALUE_CSTRING)
        printf("%s\n", v->value.cstring);
    else if (v->type == TALLY_MD_VALUE_UINT32)
        printf("%" PRIu32 "\n", v->value.u32);
    else if (v->type == TALLY_MD_VALUE_UINT64)
        printf("%" PRIu64 "\n", v->value.u64);
    else
        printf("%g\n", tally_md_typed_value_as_double(v));
}

static void list_md_set(tally_md_metric_set *set, uint32_t index)
{
    static const char *const metric_types[] = {
        "duration", "event", "event_with_range", "throughput", "timestamp", "flag", "ratio", "raw"};
    static const char *const info_types[] = {"report_reason", "value",          "flag",
                                             "timestamp",     "context_id_tag", "sample_phase",
                                             "gpu_node"};
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(set);
    printf("  Metric set %u: %s (%s), raw report %u bytes, %u raw counters\n", index,
           p->symbol_name, p->short_name, p->raw_report_size, p->raw_counter_count);
    for (uint32_t m = 0; m < p->metrics_count; m++) {
        const tally_md_metric_params *mp = tally_md_metric_set_get_metric(set, m);
        printf("    Metric %u: %-24s %-34s %-10s %-7s %s\n", m, mp->symbol_name, mp->short_name,
               metric_types[mp->metric_type], value_type_name(mp->result_type), mp->units);
    }
    for (uint32_t i = 0; i < p->information_count; i++) {
        const tally_md_information_params *ip = tally_md_metric_set_get_information(set, i);
        printf("    Info %u: %-26s %-34s %-14s %-7s %s\n", i + p->metrics_count, ip->symbol_name,
               ip->short_name, info_types[ip->info_type], value_type_name(ip->result_type),
               ip->units);
    }
}

/* The device's view through the Metrics-Discovery-style API itself. */
static int list_md(const char *backend)
{
    tally_device_options options;
    tally_device_options_from_env(&options);
    options.report_path = options.trace_path = NULL;
    if (backend)
        options.backend = backend;
    tally_device *device = NULL;
    tally_md_device *md = NULL;
    char error[256] = "";
    tally_status s = tally_device_open(&options, &device, error, sizeof(error));
    if (s == TALLY_OK)
        s = tally_md_device_open(device, &md);
    if (s != TALLY_OK) {
        fprintf(stderr, "tally list: %s\n", *error ? error : tally_status_string(s));
        tally_device_close(device);
        return 1;
    }
    const tally_md_device_params *p = tally_md_device_get_params(md);
    printf("Device: %s\nGlobal symbols:\n", p->device_name);
    for (uint32_t i = 0; i < p->global_symbols_count; i++)
        print_symbol(tally_md_device_get_global_symbol(md, i));
    for (uint32_t g = 0; g < p->concurrent_groups_count; g++) {
        tally_md_concurrent_group *group = tally_md_device_get_concurrent_group(md, g);
        const tally_md_concurrent_group_params *gp = tally_md_concurrent_group_get_params(group);
        printf("Concurrent group %u: %s: %s\n", g, gp->symbol_name, gp->description);
        for (uint32_t k = 0; k < gp->metric_sets_count; k++)
            list_md_set(tally_md_concurrent_group_get_metric_set(group, k), k);
    }
    tally_md_device_close(md);
    tally_device_close(device);
    return 0;
}

int tally_cli_list(int argc, char **argv)
{
    int api = -1;
    const char *backend = NULL;
    enum { COUNTERS, GROUPS, SETS, MD } what = COUNTERS;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--api") == 0 && i + 1 < argc) {
            if (parse_api(argv[++i], &api) != 0)
                return 2;
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            if (!(backend = parse_backend(argv[++i])))
                return 2;
        } else if (strcmp(argv[i], "--groups") == 0) {
            what = GROUPS;
        } else if (strcmp(argv[i], "--sets") == 0) {
            what = SETS;
        } else if (strcmp(argv[i], "--md") == 0) {
            what = MD;
        } else {
            fprintf(stderr, "tally list: unknown option \"%s\"\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (what == MD)
        return list_md(backend);
    const tally_catalogue *cat;
    tally_status s = tally_backend_catalogue(backend, &cat);
    if (s != TALLY_OK) {
        fprintf(stderr, "tally list: %s (TALLY_BACKEND)\n", tally_status_string(s));
        return 1;
    }
    if (what == GROUPS)
        list_groups(cat);
    else if (what == SETS)
        list_sets(cat);
    else
        list_counters(cat, api);
    return 0;
}
