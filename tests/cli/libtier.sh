# libtier.sh - libtier's ABI: soname, versioned symbols, nothing else exported.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}

is "$(objdump -p "$B/libtier.so" | awk '/SONAME/ { print $2 }')" libtier.so.0 "soname is libtier.so.0"
exported=$(objdump -T "$B/libtier.so" | awk '$2 == "g" && $4 == ".text" { print $6 ":" $7 }' | sort | tr '\n' ' ')
is "$exported" "TIER_0.1:tier_strerror TIER_0.1:tier_version " "only versioned tier_ symbols are exported"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/v.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <tier.h>
int main(void) { printf("%s\n", tier_version()); return strcmp(tier_strerror(-2), "No such file or directory"); }
C
check "a program builds against tier.h and libtier.so" cc -I"$ROOT/include" "$TMP/v.c" -L"$B" -ltier -o "$TMP/v"
run env LD_LIBRARY_PATH="$B" "$TMP/v"
is "$out" "0.1.0" "tier_version() at run time"
is "$rc" 0 "tier_strerror() maps -errno"
done_testing
