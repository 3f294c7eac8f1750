/* The layer's handle map: records found by key while other threads insert
 * and remove, growth keeps every live record, and a handle value given out
 * again while alive (which Vulkan allows for non-dispatchable handles) keeps
 * its first record until each creation is destroyed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>

#include "object_map.h"

enum { KEYS = 5000 };
static int records[KEYS + 1];

static void put_get_remove(void **state)
{
    (void)state;
    object_map map;
    object_map_init(&map);
    assert_ptr_equal(object_map_put(&map, 42, &records[1]), &records[1]);
    assert_ptr_equal(object_map_get(&map, 42), &records[1]);
    assert_null(object_map_get(&map, 43));
    assert_ptr_equal(object_map_remove(&map, 42), &records[1]);
    assert_null(object_map_get(&map, 42));
    assert_null(object_map_remove(&map, 42));
    assert_null(object_map_remove(&map, 7)); /* never put */
    object_map_destroy(&map);
}

/* Created twice, destroyed twice: the first record stays until the last destroy. */
static void a_handle_given_out_again_keeps_its_first_record(void **state)
{
    (void)state;
    object_map map;
    object_map_init(&map);
    assert_ptr_equal(object_map_put(&map, 9, &records[1]), &records[1]);
    assert_ptr_equal(object_map_put(&map, 9, &records[2]), &records[1]);
    assert_ptr_equal(object_map_get(&map, 9), &records[1]);
    assert_null(object_map_remove(&map, 9));
    assert_ptr_equal(object_map_get(&map, 9), &records[1]);
    assert_ptr_equal(object_map_remove(&map, 9), &records[1]);
    assert_null(object_map_get(&map, 9));
    /* Given out again after its last destroy: a new object, a new record. */
    assert_ptr_equal(object_map_put(&map, 9, &records[3]), &records[3]);
    assert_ptr_equal(object_map_get(&map, 9), &records[3]);
    object_map_destroy(&map);
}

/* Growth moves live records and their counts alike. */
static void growth_keeps_records_and_counts(void **state)
{
    (void)state;
    object_map map;
    object_map_init(&map);
    assert_ptr_equal(object_map_put(&map, 1, &records[1]), &records[1]);
    assert_ptr_equal(object_map_put(&map, 1, &records[1]), &records[1]);
    for (uint64_t k = 2; k <= KEYS; k++)
        assert_ptr_equal(object_map_put(&map, k, &records[k]), &records[k]);
    for (uint64_t k = 2; k <= KEYS; k += 2)
        assert_ptr_equal(object_map_remove(&map, k), &records[k]);
    for (uint64_t k = 2; k <= KEYS; k++)
        assert_ptr_equal(object_map_get(&map, k), k % 2 ? &records[k] : NULL);
    assert_null(object_map_remove(&map, 1)); /* put twice before growing */
    assert_ptr_equal(object_map_remove(&map, 1), &records[1]);
    object_map_destroy(&map);
}

struct churn {
    object_map *map;
    atomic_bool stop;
    int wrong; /* stable keys that read another record */
};

/* Keys 1..100 stay; the writer inserts and removes 1000.. meanwhile. */
static void *read_stable_keys(void *arg)
{
    struct churn *c = arg;
    while (!atomic_load(&c->stop))
        for (uint64_t k = 1; k <= 100; k++)
            c->wrong += object_map_get(c->map, k) != &records[k];
    return NULL;
}

static void readers_see_stable_keys_while_others_come_and_go(void **state)
{
    (void)state;
    object_map map;
    object_map_init(&map);
    for (uint64_t k = 1; k <= 100; k++)
        object_map_put(&map, k, &records[k]);
    struct churn c = {.map = &map};
    pthread_t reader;
    assert_int_equal(pthread_create(&reader, NULL, read_stable_keys, &c), 0);
    for (int round = 0; round < 20; round++) {
        for (uint64_t k = 1000; k < 1000 + 200; k++)
            object_map_put(&map, k + (uint64_t)round * 1000, &records[k % KEYS]);
        for (uint64_t k = 1000; k < 1000 + 200; k++)
            object_map_remove(&map, k + (uint64_t)round * 1000);
    }
    atomic_store(&c.stop, true);
    assert_int_equal(pthread_join(reader, NULL), 0);
    assert_int_equal(c.wrong, 0);
    object_map_destroy(&map);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_get_remove),
        cmocka_unit_test(a_handle_given_out_again_keeps_its_first_record),
        cmocka_unit_test(growth_keeps_records_and_counts),
        cmocka_unit_test(readers_see_stable_keys_while_others_come_and_go),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
