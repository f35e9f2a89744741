# deb.sh - the Debian packages, built (scripts/build-deb, a few minutes:
# `make test-deb`, not part of make test; tests/cli/deb.sh is the fast
# check of debian/ that is): lintian finds no error, each package holds
# its files (binaries, unit, man pages, completion, headers, the .so link
# in -dev, tier.pc), the unit is configured for /usr, the maintainer
# scripts enable and start it, the packages' dependencies are what their
# contents need, and what they hold works: the programs run, an
# application builds against libtier-dev's tier.pc and runs with
# libtier0's library.
# TIERD_DEB_DIR=DIR checks packages already built there instead.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
V=$(dpkg-parsechangelog -l "$ROOT/debian/changelog" -SVersion)
ARCH=$(dpkg-architecture -qDEB_HOST_ARCH)

OUT=${TIERD_DEB_DIR:-$TMP/out}
if [ -z "${TIERD_DEB_DIR:-}" ]; then
	start=$(date +%s)
	"$ROOT/scripts/build-deb" "$OUT" >"$TMP/build.log" 2>&1
	rc=$?
	echo "# build-deb: $(($(date +%s) - start)) s"
	is "$rc" 0 "scripts/build-deb builds the packages, lintian without errors"
	[ "$rc" = 0 ] || tail -30 "$TMP/build.log" | sed 's/^/# /'
fi
for p in tierd libtier0 libtier-dev tiersim; do
	check "${p}_${V}_$ARCH.deb built" test -f "$OUT/${p}_${V}_$ARCH.deb"
done

# lintian, once more, for its full output in the log.
run lintian --info --display-info --pedantic "$OUT"/*.changes
printf '%s\n' "$out" | sed 's/^/# lintian: /'
is "$(printf '%s\n' "$out" | grep -c '^E: ')" 0 "lintian: no errors"
echo "# lintian: $(printf '%s\n' "$out" | grep -c '^W: ') warnings, $(printf '%s\n' "$out" | grep -c '^[IP]: ') info and pedantic tags"

# contents PKG: the package's file list, one path per line (./ stripped).
contents() {
	dpkg-deb -c "$OUT/${1}_${V}_$ARCH.deb" | awk '{ print $6 ($7 == "->" ? " -> " $8 : "") }' | sed 's|^\./|/|'
}
# has PKG PATH...: each path is in the package.
has() {
	local p=$1 c missing=""
	shift
	c=$(contents "$p")
	for f in "$@"; do
		printf '%s\n' "$c" | grep -qx -- "$f" || missing="$missing $f"
	done
	is "${missing# }" "" "$p holds $*"
}
has tierd /usr/bin/tierd /usr/bin/tierctl /lib/systemd/system/tierd.service \
	/usr/share/man/man8/tierd.8.gz /usr/share/man/man8/tierctl.8.gz \
	/usr/share/man/man5/tierd.yaml.5.gz /usr/share/bash-completion/completions/tierctl \
	/usr/share/doc/tierd/README.md /usr/share/doc/tierd/copyright
has libtier0 "/usr/lib/$MA/libtier.so.0.2.0" "/usr/lib/$MA/libtier.so.0 -> libtier.so.0.2.0"
has libtier-dev /usr/include/tier.h "/usr/lib/$MA/libtier.so -> libtier.so.0" \
	"/usr/lib/$MA/libtier.a" "/usr/lib/$MA/pkgconfig/tier.pc" \
	/usr/share/man/man3/libtier.3.gz "/usr/share/man/man3/tier_open.3.gz -> libtier.3.gz"
has tiersim /usr/bin/tiersim /usr/share/man/man1/tiersim.1.gz \
	/usr/share/bash-completion/completions/tiersim
is "$(contents libtier0 | grep -c '/usr/bin/\|/usr/include/\|\.a$')" 0 "libtier0 holds only the library"
is "$(contents tiersim | grep -c 'tierd\b\|tierctl')" 0 "tiersim holds nothing of the daemon"

# Everything unpacked in one tree.
R=$TMP/root
for p in tierd libtier0 libtier-dev tiersim; do
	dpkg-deb -x "$OUT/${p}_${V}_$ARCH.deb" "$R"
done

# The unit, configured for /usr.
U=$R/lib/systemd/system/tierd.service
is "$(grep '^ExecStart=' "$U")" "ExecStart=/usr/bin/tierd --foreground" "the unit starts /usr/bin/tierd"
is "$(grep '^ExecStopPost=' "$U")" "ExecStopPost=-/usr/bin/tierd --restore" "and restores with it after a stop"
is "$(grep -c '@[A-Z]*@' "$U")" 0 "no placeholder left in the unit"
doc=$(grep '^Documentation=' "$U" | grep -o 'file://[^ ]*' | sed 's|^file://||')
check "the unit's Documentation file ($doc) is in the package" test -f "$R$doc"
for m in $(grep '^Documentation=' "$U" | grep -o 'man:[a-z.]*([0-9])'); do
	n=${m#man:} sec=${m#*(}
	sec=${sec%)}
	check "the unit's $m is in the package" test -f "$R/usr/share/man/man$sec/${n%(*}.$sec.gz"
done
is "$(grep -v '^\(#.*\|\[[A-Za-z]*\]\|[A-Za-z]*=.*\|\)$' "$U")" "" \
	"every line of the unit is a section, a Key=value, a comment or blank"
is "$(grep '^\[' "$U" | tr '\n' ' ')" "[Unit] [Service] [Install] " "its sections"
is "$(grep '^WantedBy=' "$U")" "WantedBy=multi-user.target" "enabled into multi-user.target"

# Maintainer scripts: dh_installsystemd's enable and start, stop on
# remove, forget on purge.
dpkg-deb -e "$OUT/tierd_${V}_$ARCH.deb" "$TMP/ctl"
check "tierd has a postinst" test -f "$TMP/ctl/postinst"
like "$(cat "$TMP/ctl/postinst")" "deb-systemd-helper unmask 'tierd.service'" "postinst unmasks the unit"
like "$(cat "$TMP/ctl/postinst")" "deb-systemd-helper enable 'tierd.service'" "postinst enables the unit"
like "$(cat "$TMP/ctl/postinst")" "deb-systemd-invoke \$_dh_action 'tierd.service'" "postinst starts (or restarts) it"
like "$(cat "$TMP/ctl/prerm" 2>/dev/null)" "deb-systemd-invoke stop 'tierd.service'" "prerm stops it"
like "$(cat "$TMP/ctl/postrm" 2>/dev/null)" "deb-systemd-helper purge 'tierd.service'" "postrm purges its state"
check "the maintainer scripts are valid sh" sh -n "$TMP/ctl/postinst" "$TMP/ctl/prerm" "$TMP/ctl/postrm"

# Dependencies and the library's symbols file.
dep() { dpkg-deb -f "$OUT/${1}_${V}_$ARCH.deb" Depends; }
for lib in libnuma1 libcyaml1 libjson-c5 libsystemd0 libcap-ng0; do
	like "$(dep tierd)" "$lib" "tierd depends on $lib"
done
like "$(dep libtier-dev)" "libtier0 (= $V)" "libtier-dev depends on its libtier0"
like "$(dep tiersim)" "libcairo2" "tiersim depends on libcairo2"
dpkg-deb -e "$OUT/libtier0_${V}_$ARCH.deb" "$TMP/libctl"
like "$(cat "$TMP/libctl/symbols" 2>/dev/null)" "tier_advise@TIER_0.2" "libtier0 ships its symbols file"
like "$(cat "$TMP/libctl/shlibs" 2>/dev/null)" "libtier 0 libtier0" "and shlibs"

# What the packages hold works.
run "$R/usr/bin/tierctl" --help
like "$out" "verbs:" "the packaged tierctl runs"
run "$R/usr/bin/tiersim" list
like "$out" "machine presets" "the packaged tiersim runs"
run "$R/usr/bin/tierd" --help
like "$out" "--restore" "the packaged tierd runs"
bash -c ". '$R/usr/share/bash-completion/completions/tierctl' && COMP_WORDS=(tierctl st) COMP_CWORD=1 && _tierctl && echo \${COMPREPLY[*]}" >"$TMP/c" 2>&1
is "$(cat "$TMP/c")" "status" "the packaged completion completes"
PCDIR=$R/usr/lib/$MA/pkgconfig
flags=$(PKG_CONFIG_PATH=$PCDIR PKG_CONFIG_SYSROOT_DIR=$R pkg-config --cflags --libs tier)
# shellcheck disable=SC2086
check "examples/advise.c builds against libtier-dev's tier.pc" \
	cc -Wall -Werror "$ROOT/examples/advise.c" $flags -o "$TMP/advise"
run env LD_LIBRARY_PATH="$R/usr/lib/$MA" TIERD_SOCKET="$TMP/none.sock" "$TMP/advise"
is "$rc" 0 "and runs with libtier0's library, without tierd"
run env LD_LIBRARY_PATH="$R/usr/lib/$MA" ldd "$TMP/advise"
like "$out" "$R/usr/lib/$MA/libtier.so.0" "linked with libtier.so.0 of libtier0"
done_testing
