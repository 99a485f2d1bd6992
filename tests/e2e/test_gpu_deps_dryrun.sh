#!/usr/bin/env bash
# The dry run of what scripts/gpu_check.sh carries to a GPU machine without
# network (scripts/gpu_deps.sh): the Debian 12 packages unpacked into a
# prefix, and aiprof's build pointed at that prefix alone, as on a machine
# that has none of them: pkg-config sees only the prefix (PKG_CONFIG_LIBDIR),
# a program using jansson, SQLite and zlib compiles, links and runs against
# it, and CMake configures aiprof with the prefix's jansson and SQLite.
# The packages: $AIP_GPU_DEBS, else BUILD/gpu_debs, fetched with apt-get
# download when absent; skips (77) when they cannot be had.
set -eu
BUILD=$1
SRC=$2
DEBS=${AIP_GPU_DEBS:-$BUILD/gpu_debs}
if ! ls "$DEBS"/*.deb >/dev/null 2>&1; then
  bash "$SRC/scripts/gpu_deps.sh" fetch "$DEBS" >/dev/null 2>&1 ||
    { rm -rf "$DEBS"; echo "SKIP: no packages in $DEBS and apt-get download cannot fetch them"; exit 77; }
fi
TMP=$(mktemp -d /tmp/aiprof_gpu_deps_XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
P=$TMP/prefix
exports=$(bash "$SRC/scripts/gpu_deps.sh" unpack "$DEBS" "$P")
eval "$exports"
L=$P/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_LIBDIR=$L/pkgconfig:$P/usr/share/pkgconfig # the prefix alone
PC=${PKG_CONFIG:-$P/usr/bin/pkgconf}
flags=$("$PC" --cflags --libs jansson sqlite3 zlib) || fail "pkg-config finds no jansson/sqlite3/zlib in the prefix"
case "$flags" in *"$P/usr/include"*"-L$L"*) ;; *) fail "pkg-config flags not in the prefix: $flags" ;; esac
cat >"$TMP/t.c" <<'C'
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>
int main(void)
{
    json_t *j = json_pack("{s:i}", "n", 42);
    char *s = json_dumps(j, JSON_COMPACT);
    sqlite3 *db = NULL;
    int ok = sqlite3_open(":memory:", &db) == SQLITE_OK &&
             sqlite3_exec(db, "create table t(x); insert into t values(1);", 0, 0, 0) == SQLITE_OK;
    printf("%s sqlite %s %d zlib %lu\n", s, sqlite3_libversion(), ok, (unsigned long)compressBound(100));
    free(s);
    json_decref(j);
    sqlite3_close(db);
    return ok ? 0 : 1;
}
C
# shellcheck disable=SC2086
cc -o "$TMP/t" "$TMP/t.c" $flags || fail "cannot build against the prefix"
out=$("$TMP/t") || fail "the program built against the prefix does not run"
case "$out" in '{"n":42} sqlite '*' 1 zlib '*) ;; *) fail "unexpected output: $out" ;; esac
grep -q "$L/libjansson" <<<"$(ldd "$TMP/t")" || fail "not linked with the prefix's jansson: $(ldd "$TMP/t")"
PKG_CONFIG=$PC timeout 300 cmake -S "$SRC" -B "$TMP/b" >"$TMP/cmake.log" 2>&1 ||
  { tail -20 "$TMP/cmake.log"; fail "CMake cannot configure aiprof against the prefix"; }
grep -q "^JANSSON_INCLUDE_DIRS:INTERNAL=$P/usr/include" "$TMP/b/CMakeCache.txt" ||
  fail "CMake's jansson is not the prefix's: $(grep JANSSON_INCLUDE_DIRS "$TMP/b/CMakeCache.txt")"
echo "carried packages: unpacked, built against and run ($out), CMake configured with them"
