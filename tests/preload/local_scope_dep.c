/* A dependency of local_scope_lib.c: in its local scope only. */
__attribute__((visibility("default"))) int tally_local_scope_dep_symbol(void)
{
    return 2;
}
