# libtier.sh - libtier's ABI (soname, versioned symbols, nothing else
# exported), its behaviour without and with a daemon, and the installed
# library: tier.pc, header, man pages, the example built against them.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
TMP=$(mktemp -d)
chmod 755 "$TMP"
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
NOSOCK=$TMP/none.sock

is "$(objdump -p "$B/libtier.so" | awk '/SONAME/ { print $2 }')" libtier.so.0 "soname is libtier.so.0"
exported=$(objdump -T "$B/libtier.so" | awk '$2 == "g" && $4 == ".text" { print $6 ":" $7 }' | sort | tr '\n' ' ')
is "$exported" "TIER_0.1:tier_strerror TIER_0.1:tier_version TIER_0.2:tier_advise TIER_0.2:tier_advise_pid TIER_0.2:tier_close TIER_0.2:tier_open TIER_0.2:tier_query " \
	"only versioned tier_ symbols are exported (TIER_0.1, TIER_0.2)"
# Whatever the section: every defined dynamic symbol is a tier_ function or
# a version node (the project's internal code linked in stays hidden).
others=$(objdump -T "$B/libtier.so" | awk '$1 ~ /^[0-9a-f]+$/ && !/\*UND\*/ && $NF !~ /^(tier_|TIER_0\.)/ { print $NF }' | tr '\n' ' ')
is "$others" "" "no other symbol is exported"

cat >"$TMP/v.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <tier.h>
int main(void)
{
	tier_t *t = (tier_t *)1;
	int ret = tier_open(&t);

	printf("%s\n%d %s\n%s\n", tier_version(), ret, t ? "handle" : "null", tier_strerror(ret));
	return 0;
}
C
check "a program builds against tier.h and libtier.so" cc -Wall -Werror -I"$ROOT/include" "$TMP/v.c" -L"$B" -ltier -o "$TMP/v"
run env LD_LIBRARY_PATH="$B" TIERD_SOCKET="$NOSOCK" "$TMP/v"
is "$(echo "$out" | sed -n 1p)" "0.2.0" "tier_version() at run time"
is "$(echo "$out" | sed -n 2p)" "-2 null" "tier_open without tierd: -ENOENT, no handle"
like "$(echo "$out" | sed -n 3p)" "tierd is not running" "tier_strerror explains -ENOENT"
# A socket file nobody listens on (a daemon that died): -ECONNREFUSED.
if python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$TMP/dead.sock" 2>/dev/null; then
	run env LD_LIBRARY_PATH="$B" TIERD_SOCKET="$TMP/dead.sock" "$TMP/v"
	is "$(echo "$out" | sed -n 2p)" "-111 null" "tier_open on a dead daemon's socket: -ECONNREFUSED"
	like "$(echo "$out" | sed -n 3p)" "tierd is not running" "tier_strerror explains -ECONNREFUSED"
else
	skip "tier_open on a dead daemon's socket" "python3 cannot bind a Unix socket here"
	skip "tier_strerror explains -ECONNREFUSED" "python3 cannot bind a Unix socket here"
fi

# The example, as built in the tree, without a daemon.
run env TIERD_SOCKET="$NOSOCK" "$B/advise"
is "$rc" 0 "the example runs without tierd"
like "$out" "note: advice skipped: tierd is not running" "and says why its advice was skipped"
is "$(echo "$out" | grep -c '^page ')" 16 "the example queried its 16 pages"
if [ "$(cat /sys/devices/system/node/online 2>/dev/null)" = 0 ]; then
	is "$(echo "$out" | grep '^page ' | grep -vc ': node 0 tier 0$')" 0 \
		"tier_query: every page on node 0, tier 0 on this one-node host"
else
	skip "tier_query: every page on node 0" "this host has more than one node"
fi

# Installed: header, library, tier.pc, man pages; the example builds
# against the installed pkg-config file only.
DEST=$TMP/inst
check "meson install --destdir" meson install -C "$B" --no-rebuild --quiet --destdir "$DEST"
PC=$(find "$DEST" -name tier.pc | head -1)
check "tier.pc installed" test -n "$PC"
PCDIR=$(dirname "$PC")
LIBDIR=$(dirname "$PCDIR")
check "libtier.so.0 installed next to it" test -e "$LIBDIR/libtier.so.0"
is "$(PKG_CONFIG_PATH=$PCDIR pkg-config --modversion tier)" 0.2.0 "tier.pc carries the library's version"
for m in libtier tier_open tier_close tier_advise tier_advise_pid tier_query tier_strerror tier_version; do
	f=$(find "$DEST" -path "*/man3/$m.3" | head -1)
	check "man page $m(3) installed" test -n "$f"
done
MAN=$(find "$DEST" -path '*/man3/libtier.3' | head -1)
run groff -man -Tutf8 -ww -z "$MAN"
is "$err" "" "libtier(3) renders without warnings"
man_text=$(MANWIDTH=200 man -l "$MAN" 2>/dev/null | col -b)
for f in tier_open tier_close tier_advise tier_advise_pid tier_query tier_strerror tier_version \
	TIER_ADVICE_PIN_FAST TIERD_SOCKET ECONNREFUSED; do
	like "$man_text" "$f" "libtier(3) documents $f"
done

# With the sysroot: pkg-config prefixes the .pc's paths with DEST.
flags=$(PKG_CONFIG_PATH=$PCDIR PKG_CONFIG_SYSROOT_DIR=$DEST pkg-config --cflags --libs tier)
like "$flags" "-I$DEST/" "pkg-config --cflags points into the install"
like "$flags" "-L$LIBDIR" "pkg-config --libs points into the install"
# shellcheck disable=SC2086
check "examples/advise.c builds against the installed tier.pc (sysroot)" \
	cc -Wall -Werror "$ROOT/examples/advise.c" $flags -o "$TMP/advise"
# The same with the prefix overridden instead.
prefix=$(PKG_CONFIG_PATH=$PCDIR pkg-config --variable=prefix tier)
flags2=$(PKG_CONFIG_PATH=$PCDIR pkg-config --define-variable=prefix="$DEST$prefix" --cflags --libs tier)
# shellcheck disable=SC2086
check "examples/advise.c builds against the installed tier.pc (prefix override)" \
	cc -Wall -Werror "$ROOT/examples/advise.c" $flags2 -o "$TMP/advise2"
run env LD_LIBRARY_PATH="$LIBDIR" ldd "$TMP/advise"
like "$out" "$LIBDIR/libtier.so.0" "the example runs with the installed libtier.so.0"
run env LD_LIBRARY_PATH="$LIBDIR" TIERD_SOCKET="$NOSOCK" "$TMP/advise"
is "$rc" 0 "the installed example runs without tierd"
like "$out" "note: advice skipped: tierd is not running" "with a clear note"
if [ "$(cat /sys/devices/system/node/online 2>/dev/null)" = 0 ]; then
	is "$(echo "$out" | grep '^page ' | grep -c ': node 0 tier 0$')" 16 \
		"its pages: node 0, tier 0"
else
	skip "its pages: node 0, tier 0" "this host has more than one node"
fi

# With a daemon (a simulated machine): tier_open connects and each advice
# gets tierd's answer.
SOCK=$TMP/tierd.sock
"$B/tierd" --machine sim:dram-cxl --socket "$SOCK" --foreground 2>"$TMP/log" &
PID=$!
for _ in $(seq 1 300); do
	[ -S "$SOCK" ] && "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1 && break
	sleep 0.1
done
run env TIERD_SOCKET="$SOCK" "$B/advise"
is "$rc" 0 "the example runs with tierd"
is "$(echo "$out" | grep -c '^advise .* \(HOT\|COLD\): ')" 2 "tier_open connected; both advice calls answered"
check "no transport failure" test "$(echo "$out" | grep -c 'did not answer\|unexpected answer\|not running')" = 0
echo "$out" | grep '^advise' | sed 's/^/# /'
done_testing
