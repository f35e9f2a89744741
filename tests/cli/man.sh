# man.sh - the man pages of tierd(8), tierctl(8), tiersim(1) and
# tierd.yaml(5): installed by meson, rendered without warnings, and
# complete: every option and verb that --help (and each verb's table of
# options, through the completion script) offers is documented in its
# program's page, and every key of the configuration's schema in
# tierd.yaml(5). Adding an option or a key without documenting it fails
# here.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# render PAGE: the page as plain text, one very long line per paragraph
# (no line breaks, so no hyphenation inside a word).
render() {
	MANWIDTH=1000 man -l "$1" 2>/dev/null | col -b
}

# opts_of TEXT: the long options named in TEXT, one per line.
opts_of() {
	printf '%s\n' "$1" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# documented PAGE_TEXT WHAT ITEMS...: one check that each item appears in
# the page, naming those missing.
documented() {
	local text=$1 what=$2 missing="" i
	shift 2
	for i in "$@"; do
		case "$text" in
		*"$i"*) ;;
		*) missing="$missing $i" ;;
		esac
	done
	is "${missing# }" "" "$what"
}

# Installed where man looks for them.
DEST=$TMP/inst
check "meson install --destdir" meson install -C "$B" --no-rebuild --quiet --destdir "$DEST"
for p in man8/tierd.8 man8/tierctl.8 man1/tiersim.1 man5/tierd.yaml.5; do
	f=$(find "$DEST" -path "*/man/$p" | head -1)
	check "$p installed" test -n "$f"
done

for p in tierd.8 tierctl.8 tiersim.1 tierd.yaml.5; do
	run groff -man -Tutf8 -ww -z "$ROOT/man/$p"
	is "$err" "" "$p renders without warnings"
done

# tierd: every option of --help.
page=$(render "$ROOT/man/tierd.8")
like "$page" "EXIT STATUS" "tierd(8) has an EXIT STATUS section"
like "$page" "SIGHUP" "tierd(8) documents its signals"
help=$("$B/tierd" --help)
# shellcheck disable=SC2046
documented "$page" "tierd(8) documents every option of tierd --help" $(opts_of "$help")
is "$(opts_of "$help" | wc -l)" "$(opts_of "$help" | wc -l | awk '$1 >= 7')" "tierd --help lists its options"

# tierctl and tiersim: every verb, each verb's options as --help prints
# them and as its table holds them (the completion script, made from the
# tables), sub-verbs too.
. "$B/dist/tierctl"
. "$B/dist/tiersim"
# complete PROG WORDS...: COMPREPLY for the last word, one per line.
complete_words() {
	local prog=$1
	shift
	COMP_WORDS=("$prog" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	"_$prog"
	printf '%s\n' "${COMPREPLY[@]}"
}

for prog in tierctl tiersim; do
	case $prog in
	tierctl) page=$(render "$ROOT/man/tierctl.8") ;;
	tiersim) page=$(render "$ROOT/man/tiersim.1") ;;
	esac
	help=$("$B/$prog" --help)
	verbs=$(printf '%s\n' "$help" | sed -n '/^verbs:/,$p' | awk 'NR > 1 { print $1 }')
	check "$prog --help lists verbs" test "$(printf '%s\n' "$verbs" | wc -l)" -ge 5
	# shellcheck disable=SC2086
	documented "$page" "$prog's page documents every verb" $verbs
	# shellcheck disable=SC2046
	documented "$page" "$prog's page documents the options of $prog --help" $(opts_of "$help")
	like "$page" "EXIT STATUS" "$prog's page has an EXIT STATUS section"
	for v in $verbs; do
		case $prog/$v in
		tierctl/cgroup) paths="$v/set $v/show" ;;
		*) paths=$v ;;
		esac
		vhelp=$("$B/$prog" "$v" --help 2>&1)
		for path in $paths; do
			# shellcheck disable=SC2046
			table=$(complete_words "$prog" $(echo "$path" | tr / ' ') --)
			# shellcheck disable=SC2046
			documented "$page" "$prog's page documents $path's options (--help and table)" \
				$({ opts_of "$vhelp"; opts_of "$table"; } | sort -u)
		done
	done
done
page=$(render "$ROOT/man/tierctl.8")
documented "$page" "tierctl(8) documents cgroup's sub-verbs" "cgroup set" "cgroup show"
# shellcheck disable=SC2046
documented "$page" "tierctl(8) documents hint's advice" $(complete_words tierctl hint 1 0x1000 4K "")
documented "$page" "tierctl(8) documents TIERD_SOCKET" TIERD_SOCKET

# tierd.yaml(5): every key of the schema (the CYAML_FIELD_* tables of
# src/common/config_yaml.c), and each section.
page=$(render "$ROOT/man/tierd.yaml.5")
keys=$(grep -o 'CYAML_FIELD_[A-Z_]*("[a-z_]*"' "$ROOT/src/common/config_yaml.c" |
	sed 's/.*("\(.*\)"/\1/' | sort -u)
check "the schema's keys were found (at least 20)" test "$(printf '%s\n' "$keys" | wc -l)" -ge 20
# shellcheck disable=SC2086
documented "$page" "tierd.yaml(5) documents every key of the schema" $keys
for s in TOPOLOGY DAEMON POLICY PROCESSES CGROUPS; do
	like "$page" "$s" "tierd.yaml(5) has a $s section"
done

# The pages name each other and the unit's Documentation= resolves.
like "$(grep '^Documentation=' "$B/tierd.service")" "man:tierd(8)" "the unit points at man:tierd(8)"
for ref in $(grep '^Documentation=' "$B/tierd.service" | grep -o 'man:[a-z.]*([0-9])'); do
	name=${ref#man:}
	f="$ROOT/man/${name%(*}.${name#*(}"
	f=${f%)}
	check "the unit's $ref exists" test -f "$f"
done
done_testing
