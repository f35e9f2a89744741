# probe.sh - `tierctl probe` on this host: a quick probe measures every
# memory node and prints its figures, the JSON has the contract's shape,
# results are saved and read back, progress shows on a terminal only, and
# bad input gives one clear line. (The three-tier guest: tests/system/probe.sh.)
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# count_list "0-2,4" -> 4
count_list() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF { n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n + 0 }'
}
# has_nodes < JSON: a probe document with at least one node
has_nodes() { jq -e '.nodes | length > 0' >/dev/null; }

NODE=/sys/devices/system/node
mem=$(cat "$NODE/has_memory" 2>/dev/null || cat "$NODE/online")
want_nodes=$(count_list "$mem")

# A quick probe of every memory node, as JSON, saved where asked.
run "$B/tierctl" probe --quick --json --output "$TMP/probe.json"
is "$rc" 0 "quick probe --json exits 0"
is "$err" "" "no progress on stderr when it is not a terminal"
j=$out
is "$(echo "$j" | jq '.nodes | length')" "$want_nodes" "one node object per memory node ($mem)"
is "$(echo "$j" | jq -c '[.nodes[] | has("id","latency_ns","read_bandwidth_mbps","write_bandwidth_mbps","claim","claim_mismatch")] | all')" \
	true "node objects carry the contract's fields"
is "$(echo "$j" | jq '[.nodes[] | .latency_ns > 0 and .read_bandwidth_mbps > 0 and .write_bandwidth_mbps > 0] | all')" \
	true "every node has a latency and both bandwidths"
is "$(echo "$j" | jq -c '[.nodes[].from[0] | (.latency_ns, .read_bandwidth_mbps) | .samples | length] | unique')" "[15]" \
	"quick: fifteen samples per figure, all kept"
is "$(echo "$j" | jq '[.nodes[] | .noise_pct | has("latency","read_bandwidth","write_bandwidth")] | all')" \
	true "noise reported per figure"
is "$(echo "$j" | jq '[.nodes[] | .latency_ns == .from[0].latency_ns.min and
	.read_bandwidth_mbps == .from[0].read_bandwidth_mbps.max] | all')" true \
	"the figures are the best samples (least latency, most bandwidth)"
ref=$(echo "$j" | jq '.initiators[0].reference')
is "$(echo "$j" | jq --argjson r "$ref" '.nodes[] | select(.id == $r) | [.claim_mismatch, .ratio.latency]' | jq -c .)" \
	"[false,1]" "the reference node is the yardstick: ratio 1, never a mismatch"
is "$(echo "$j" | jq '[.nodes[].from[].on_node_pct] | min')" 100 "the buffers' pages were on their nodes"
is "$(echo "$j" | jq -r '.tolerance_pct')" 25 "default tolerance 25%"
is "$(jq -cS . "$TMP/probe.json")" "$(echo "$j" | jq -cS .)" "saved file holds the printed document"

run "$B/tierctl" probe --load "$TMP/probe.json" --json
is "$rc" 0 "--load exits 0"
is "$out" "$j" "--load --json reads the saved results back unchanged"
run "$B/tierctl" probe --load "$TMP/probe.json"
like "$out" "latency ns" "--load prints the table"
like "$out" "reference" "table marks the reference node"

# The table: one row per (node, initiator) pair.
run "$B/tierctl" probe --quick --no-save
is "$rc" 0 "table probe exits 0"
nr_ini=$(count_list "$(cat "$NODE/has_cpu" 2>/dev/null || cat "$NODE/online")")
is "$(echo "$out" | grep -cE '^[0-9]+ +[0-9]+ ')" "$((want_nodes * nr_ini))" "one row per node and initiator"
row=$(echo "$out" | grep -m1 -E '^[0-9]+ +[0-9]+ ')
like "$row" "±" "rows show the noise"
is "$(echo "$row" | awk '{ print ($3 > 0 && $5 > 0 && $7 > 0) }')" 1 "row has latency, read and write figures"

first=$(echo "$mem" | tr ',-' '\n\n' | head -n 1)
run "$B/tierctl" probe --quick --nodes "$first" --json --no-save --tolerance 40 --repeats 2 --buffer-size 16M
is "$rc" 0 "--nodes $first with size and repeat flags"
is "$(echo "$out" | jq -c '[.nodes[].id] | index('"$first"') != null')" true "--nodes: the node is probed"
is "$(echo "$out" | jq -c '[.tolerance_pct, .repeats, .nodes[0].from[0].buffer_bytes]')" "[40,2,16777216]" \
	"--tolerance, --repeats and --buffer-size are applied"

# Progress: on a terminal only.
if command -v script >/dev/null; then
	script -qec "$B/tierctl probe --quick --no-save --json >$TMP/tty.json" /dev/null >"$TMP/tty.log" 2>&1
	like "$(cat "$TMP/tty.log")" "probing node $first from node" "progress on a terminal"
	check "JSON on stdout while progress shows" has_nodes <"$TMP/tty.json"
else
	skip "progress on a terminal" "script(1) not installed"
	skip "JSON on stdout while progress shows" "script(1) not installed"
fi

# Bad --nodes: one line on stderr, usage status 2, nothing on stdout.
expect_bad_nodes() { # LIST WANTED-SUBSTRING
	run "$B/tierctl" probe --quick --no-save --nodes "$1"
	is "$rc" 2 "--nodes '$1': exit status 2"
	is "$(lines "$err")" 1 "--nodes '$1': one error line"
	like "$err" "tierctl probe: --nodes: $2" "--nodes '$1': says what is wrong"
	is "$out" "" "--nodes '$1': nothing on stdout"
}
expect_bad_nodes "1-x" "invalid list '1-x' at offset 2"
expect_bad_nodes "" "empty node list"
expect_bad_nodes "999" "node 999 is not online (online: "
expect_bad_nodes "0,,1" "invalid list"
# A node without memory (a CPU-only node), where this machine has one.
all_ids() { for n in "$NODE"/node[0-9]*; do echo "${n##*node}"; done | sort; }
mem_ids() {
	echo "$mem" | tr ',' '\n' |
		awk -F- 'NF { hi = $2 == "" ? $1 : $2; for (i = $1; i <= hi; i++) print i }' | sort
}
nomem=$(comm -23 <(all_ids) <(mem_ids) | head -n 1)
if [ -n "$nomem" ]; then
	expect_bad_nodes "$nomem" "node $nomem has no memory to probe"
fi

# Other bad values.
for args in "--repeats 0" "--repeats x" "--tolerance -5" "--buffer-size 1K" "--buffer-size 12Q" \
	"--chase-steps 0" "--seed x" "stray" "--output $TMP/x --no-save" "--load $TMP/probe.json --quick"; do
	# shellcheck disable=SC2086 # word splitting wanted
	run "$B/tierctl" probe $args
	is "$rc" 2 "$args: usage error 2"
	is "$(lines "$err")" 1 "$args: one error line"
done
like "$err" "--load only shows saved results" "--load with measuring flags says why"

# Saving where asked but impossible: the figures still print; status 1.
: >"$TMP/file"
run "$B/tierctl" probe --quick --json --output "$TMP/file/probe.json"
is "$rc" 1 "unwritable --output: exit status 1"
is "$(lines "$err")" 1 "unwritable --output: one error line"
like "$err" "tierctl probe: not saved: $TMP/file/probe.json: Not a directory" "unwritable --output: names the path and why"
check "unwritable --output: the figures are still printed" has_nodes <<<"$out"

run "$B/tierctl" probe --load "$TMP/none.json"
is "$rc" 1 "--load of a missing file: exit 1"
is "$err" "tierctl probe: $TMP/none.json: No such file or directory" "--load of a missing file: one clear line"
printf '{"version":1' >"$TMP/cut.json"
run "$B/tierctl" probe --load "$TMP/cut.json"
is "$rc" 1 "--load of a cut file: exit 1"
like "$err" "tierctl probe: $TMP/cut.json: not a JSON document" "--load of a cut file: says so"
jq '.nodes[0].from[0].latency_ns.samples[0] = "fast"' "$TMP/probe.json" >"$TMP/bad.json"
run "$B/tierctl" probe --load "$TMP/bad.json"
is "$err" "tierctl probe: $TMP/bad.json: nodes[0].from[0].latency_ns.samples: not a list of numbers" \
	"--load of a bad field: names the field"

run "$B/tierctl" probe --help
is "$rc" 0 "--help exits 0"
like "$out" "--nodes LIST" "--help lists --nodes"
like "$out" "--quick" "--help lists --quick"
run "$B/tierctl" --help
like "$out" "probe" "tierctl --help lists the probe verb"

done_testing
