# deb.sh - the Debian packaging (debian/) against the build, without
# building the packages (that is tests/package/deb.sh, `make test-deb`):
# every file meson installs belongs to exactly one package's .install
# list, libtier0.symbols lists exactly the symbols libtier.so exports
# (with their versions, as src/libtier/libtier.map gives them), and the
# unit is configured where dh_installsystemd enables it from.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
D=$ROOT/debian
MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

for f in control rules changelog copyright source/format libtier0.symbols \
	tierd.install libtier0.install libtier-dev.install tiersim.install; do
	check "debian/$f exists" test -f "$D/$f"
done
is "$(cat "$D/source/format")" "3.0 (native)" "source format 3.0 (native)"
is "$(grep '^Package:' "$D/control" | awk '{ print $2 }' | tr '\n' ' ')" \
	"tierd libtier0 libtier-dev tiersim " "the four packages"
is "$(dpkg-parsechangelog -l "$D/changelog" -SVersion)" \
	"$(meson introspect "$B" --projectinfo | jq -r .version)" \
	"the package's version is the project's (meson.build)"
check "debian/rules is executable" test -x "$D/rules"

# What meson installs, as the package build installs it: prefix /usr, the
# unit in /lib/systemd/system (debian/rules), source-tree files aside.
prefix=$(meson introspect "$B" --buildoptions | jq -r '.[] | select(.name == "prefix") | .value')
installed=$(meson introspect "$B" --installed | jq -r '.[]' | grep "^$prefix/" |
	sed -e "s|^$prefix/lib/systemd/system/|lib/systemd/system/|" -e "s|^$prefix/|usr/|" | sort)
check "meson installs at least 20 files" test "$(printf '%s\n' "$installed" | wc -l)" -ge 20
like "$(grep -A1 'override_dh_auto_configure' "$D/rules")" "-Dsystemdsystemunitdir=/lib/systemd/system" \
	"debian/rules puts the unit in /lib/systemd/system"
# The .install lines, "FILE PATTERN" with the multiarch triplet in.
pats=$(for inst in "$D"/*.install; do
	sed -e '/^$/d' -e "s|\${DEB_HOST_MULTIARCH}|$MA|" -e "s|^|$(basename "$inst") |" "$inst"
done)
unowned="" twice="" stale=""
for f in $installed; do
	n=0
	while read -r _ pat; do
		# shellcheck disable=SC2254
		case $f in $pat) n=$((n + 1)) ;; esac
	done <<<"$pats"
	[ "$n" = 0 ] && unowned="$unowned $f"
	[ "$n" -gt 1 ] && twice="$twice $f"
done
is "${unowned# }" "" "every installed file is in a package's .install list"
is "${twice# }" "" "and in one only"
# Each .install line matches something meson installs (no stale entry).
while read -r inst pat; do
	hit=0
	for f in $installed; do
		# shellcheck disable=SC2254
		case $f in $pat) hit=1; break ;; esac
	done
	[ "$hit" = 1 ] || stale="$stale $inst:$pat"
done <<<"$pats"
is "${stale# }" "" "every .install line names an installed file"

# libtier0.symbols: the exported symbols, each with its version node.
exported=$(objdump -T "$B/libtier.so" | awk '$1 ~ /^[0-9a-f]+$/ && !/\*UND\*/ { v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }' | sort)
listed=$(awk '/^ [A-Za-z_]/ { print $1 }' "$D/libtier0.symbols" | sort)
is "$(echo $listed)" "$(echo $exported)" "libtier0.symbols lists what libtier.so exports"
is "$(head -1 "$D/libtier0.symbols")" \
	"$(objdump -p "$B/libtier.so" | awk '/SONAME/ { print $2 }') libtier0 #MINVER#" \
	"libtier0.symbols names the soname, libtier0"

# The unit: a configured copy without placeholders, pointing at pages
# that exist and at the README meson installs.
U=$B/tierd.service
check "the built unit has no @VAR@ left" sh -c "! grep -q '@[A-Z]*@' '$U'"
like "$(grep '^ExecStart=' "$U")" "$prefix/bin/tierd --foreground" "ExecStart runs the installed tierd"
like "$(grep '^ExecStopPost=' "$U")" "$prefix/bin/tierd --restore" "ExecStopPost restores"
like "$(grep '^Documentation=' "$U")" "file://$prefix/share/doc/tierd/README.md" \
	"Documentation= names the installed README"
like "$(grep -A3 'override_dh_compress' "$D/rules")" "-X.md" "and the package leaves it uncompressed"
done_testing
