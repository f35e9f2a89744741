# completion.sh - the bash completion of tierctl and tiersim: the scripts
# the build prints from the programs' verb tables (PROG --completion bash),
# sourced into bash and asked as bash asks them (COMP_WORDS, COMP_CWORD),
# give the verbs, sub-verbs, options and option values the programs take;
# the options of each verb are those its --help names; the installed copy
# is the same script. (tests/unit/test_cli.c checks that a verb added to a
# table is completed with no script edited.)
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

run "$B/tierctl" --completion bash
is "$rc" 0 "tierctl --completion bash exits 0"
is "$out" "$(cat "$B/dist/tierctl")" "the built script is what tierctl prints"
run "$B/tierctl" --completion zsh
is "$rc" 2 "an unknown shell is a usage error"
is "$err" "tierctl: --completion: expected the shell's name, bash" "of one line naming it"
check "tierctl's script is valid bash" bash -n "$B/dist/tierctl"
check "tiersim's script is valid bash" bash -n "$B/dist/tiersim"

. "$B/dist/tierctl"
. "$B/dist/tiersim"
is "$(complete -p tierctl tiersim)" "complete -F _tierctl tierctl
complete -F _tiersim tiersim" "sourcing registers both functions"

# c PROG WORDS...: what bash would offer for the last word, sorted, on one
# line.
c() {
	local prog=$1
	shift
	COMP_WORDS=("$prog" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	"_$prog"
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
sorted() { tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'; }

# Verbs: those --help lists.
for prog in tierctl tiersim; do
	verbs=$("$B/$prog" --help | sed -n '/^verbs:/,$p' | awk 'NR > 1 { print $1 }' | sorted)
	is "$(c "$prog" "")" "$verbs" "$prog <TAB>: the verbs of --help"
done
is "$(c tierctl st)" "status" "tierctl st<TAB>: status"
is "$(c tierctl --)" "--completion --help" "tierctl --<TAB>: the program's options"
is "$(c tierctl --completion "")" "bash" "tierctl --completion <TAB>: bash"
is "$(c tierctl cgroup "")" "set show" "tierctl cgroup <TAB>: its sub-verbs"
is "$(c tierctl cgroup set db --tier-m)" "--tier-max --tier-min" "cgroup set's options after its operand"
is "$(c tierctl hint 1 0x1000 4K p)" "pin-fast" "hint's advice completes"
is "$(c tierctl nosuchverb --)" "" "nothing for an unknown verb"

# Each verb's options (its table) are all named by its --help: the
# verb's help and completion cannot drift apart.
for pv in tierctl/topology tierctl/probe tierctl/status tierctl/top tierctl/reload \
	tierctl/hint "tierctl/cgroup set" "tierctl/cgroup show" tierctl/heatmap tierctl/explain \
	tiersim/list tiersim/topology tiersim/run tiersim/compare tiersim/convert; do
	prog=${pv%%/*} v=${pv#*/}
	# shellcheck disable=SC2086
	got=$(c "$prog" $v --)
	# shellcheck disable=SC2086
	help=$( ("$B/$prog" ${v%% *} --help; echo --help) | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
	missing=$(for o in $got; do printf '%s\n' "$help" | grep -qx -- "$o" || echo "$o"; done)
	is "$(echo $missing)" "" "$prog $v --<TAB>: options, each named by its --help"
	check "$prog $v --<TAB>: offers some" test "$(echo "$got" | wc -w)" -ge 2
done
is "$(c tierctl probe --)" "$( ("$B/tierctl" probe --help; echo --help) | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | sorted)" \
	"tierctl probe --<TAB>: exactly the options of its --help"

# Option values from the programs' own tables.
is "$(c tiersim run --machine "")" "$( ("$B/tiersim" list --json | jq -r '.machines[].name'; echo file:) | sorted)" \
	"tiersim run --machine <TAB>: the presets (tiersim list), file:"
is "$(c tiersim compare --policies "")" "$("$B/tiersim" list --json | jq -r '.policies[].name' | sorted)" \
	"tiersim compare --policies <TAB>: the policies"
is "$(c tiersim run --workload gups-m)" "gups-moving-hotset" "tiersim run --workload gups-m<TAB>"
is "$(c tiersim convert --from "")" "lackey" "tiersim convert --from <TAB>: lackey"
touch "$TMP/heat.png" "$TMP/other"
is "$(c tierctl heatmap --png "$TMP/he")" "$TMP/heat.png" "tierctl heatmap --png <TAB>: file names"

# Installed where bash-completion looks for it, the same script.
DEST=$TMP/inst
check "meson install --destdir" meson install -C "$B" --no-rebuild --quiet --destdir "$DEST"
for prog in tierctl tiersim; do
	f=$(find "$DEST" -path "*/share/bash-completion/completions/$prog" | head -1)
	check "$prog's completion installed in share/bash-completion/completions" test -n "$f"
	[ -n "$f" ] && is "$(cat "$f")" "$("$B/$prog" --completion bash)" "the installed $prog script is the generated one"
done
done_testing
