/* tally list: the catalogue as a table, whole or in one API's vocabulary. */
#include <stdio.h>
#include <string.h>

#include <tally/tally.h>

#include "tally_cli.h"

static int parse_api(const char *name, int *api)
{
    for (int a = 0; a < TALLY_API_COUNT; a++) {
        if (strcmp(name, tally_api_string((tally_api)a)) == 0) {
            *api = a;
            return 0;
        }
    }
    fprintf(stderr, "tally list: unknown API \"%s\" (vk, gl, cl or md)\n", name);
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
        printf("%-24s %-36s %-18s %-12s %-8s %s\n", symbol, name,
               tally_catalogue_group(cat, c->group)->symbol, c->unit_name,
               tally_storage_string(c->storage),
               c->raw_index == TALLY_NOT_RAW ? "derived"
               : c->exact                    ? "exact"
                                             : "modeled");
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

int tally_cli_list(int argc, char **argv)
{
    int api = -1;
    enum { COUNTERS, GROUPS, SETS } what = COUNTERS;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--api") == 0 && i + 1 < argc) {
            if (parse_api(argv[++i], &api) != 0)
                return 2;
        } else if (strcmp(argv[i], "--groups") == 0) {
            what = GROUPS;
        } else if (strcmp(argv[i], "--sets") == 0) {
            what = SETS;
        } else {
            fprintf(stderr, "tally list: unknown option \"%s\"\n", argv[i]);
            return 2;
        }
    }
    const tally_catalogue *cat;
    tally_status s = tally_backend_catalogue(NULL, &cat);
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
