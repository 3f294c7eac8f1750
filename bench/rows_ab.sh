#!/bin/sh
# Two revisions of the report writers, paired in time (bench/rows_ab.c):
# each revision's writers/ built as a library bound to its own symbols,
# then rows_ab run in both orders (a library's place can favour it by
# about 1 % on some machines; the two orders cancel it).
#
# usage: bench/rows_ab.sh BUILD REV_A REV_B [pairs]
#   BUILD: a build directory with bin/rows_ab and lib/libtally
#   REV_A, REV_B: git revisions, or . for the working tree's writers/
# Pin it to a core for figures worth comparing:
#   taskset -c 1 bench/rows_ab.sh build HEAD~1 HEAD
set -eu
if [ $# -lt 3 ]; then
    sed -n '2,11p' "$0"
    exit 2
fi
build=$(cd "$1" && pwd)
pairs=${4:-400}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# library REVISION NAME: $work/libNAME.so from REVISION's writers/
library() {
    mkdir -p "$work/$2"
    if [ "$1" = . ]; then
        cp -r "$source_dir/writers" "$source_dir/include" "$work/$2/"
    else
        git -C "$source_dir" archive "$1" writers include | tar -x -C "$work/$2"
    fi
    # as the build compiles them (RelWithDebInfo)
    ${CC:-cc} -std=c11 -O2 -g -DNDEBUG -D_GNU_SOURCE -ffp-contract=off -fPIC -shared \
        -Wl,-Bsymbolic -I"$work/$2/writers" -I"$work/$2/include" "$work/$2"/writers/*.c \
        -L"$build/lib" -ltally -lm -lpthread -Wl,-rpath,"$build/lib" -o "$work/lib$2.so"
}

library "$2" a
library "$3" b
echo "A: $2 (liba.so), B: $3 (libb.so)"
"$build/bin/rows_ab" "$work/liba.so" "$work/libb.so" "$pairs" | tee "$work/ab"
echo "the other order:"
"$build/bin/rows_ab" "$work/libb.so" "$work/liba.so" "$pairs" | tee "$work/ba"
# B's time over A's, the place's favour cancelled: sqrt(ab / ba)
awk '/^B\/A/ { sub(",", "", $3); r[n++] = $3 } END {
    printf "B/A, both orders: %.3f (below 1: B is faster)\n", sqrt(r[0] / r[1]) }' "$work/ab" "$work/ba"
