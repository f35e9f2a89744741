# topology.sh - `tierctl topology` and `tierd --check` on this host and on
# sysfs fixtures: output shapes, tier ranking, one clear line per bad input.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
FX=$ROOT/tests/fixtures/sysfs
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# This host: as many nodes as the kernel has online, at least one tier.
run "$B/tierctl" topology --json
is "$rc" 0 "topology --json on this host exits 0"
online=$(cat /sys/devices/system/node/online)
want_nodes=$(echo "$online" | tr ',' '\n' | awk -F- '{ n += ($2 == "" ? 1 : $2 - $1 + 1) } END { print n }')
is "$(echo "$out" | jq '.nodes | length')" "$want_nodes" "one JSON node per online node ($online)"
check "at least one tier on this host" test "$(echo "$out" | jq '.tiers | length')" -ge 1
is "$(echo "$out" | jq -c '[.nodes[0] | has("id","cpus","mem_total_bytes","mem_free_bytes","distance","hmat","kernel_tier")] | all')" \
	"true" "node objects carry the contract's fields"

run "$B/tierctl" topology
is "$rc" 0 "table on this host exits 0"
like "$out" "ranked by" "table names the ranking source"

# The three-tier guest's sysfs: ranks 0,1,2 = nodes 0,1,2 with HMAT figures.
run "$B/tierctl" topology --sysfs-root "$FX/guest-3tier" --json
is "$(echo "$out" | jq -c '[.tiers[] | [.rank, .nodes]]')" '[[0,[0]],[1,[1]],[2,[2]]]' "guest fixture: three tiers"
is "$(echo "$out" | jq -c '[.nodes[].hmat.read_latency_ns]')" '[100,250,500]' "guest fixture: HMAT latencies"
is "$(echo "$out" | jq -c '[.nodes[].hmat.read_bandwidth_mbps]')" '[20480,8192,2048]' "guest fixture: HMAT bandwidths"
is "$(echo "$out" | jq -c '[.nodes[].kernel_tier]')" '[4,28,225]' "guest fixture: kernel tiers"
is "$(echo "$out" | jq -r '.rank_source')" kernel "guest fixture: ranked by the kernel's tiers"

run "$B/tierctl" topology --sysfs-root "$FX/two-socket-cxl-slit" --json
is "$(echo "$out" | jq -c '[.tiers[].nodes]')" '[[0,1],[2,3]]' "SLIT-only fixture: CPU nodes first"
is "$(echo "$out" | jq -r '.rank_source')" slit "SLIT-only fixture: ranked by SLIT"
is "$(echo "$out" | jq -c '.nodes[2].hmat')" null "no HMAT is null"
is "$(echo "$out" | jq -c '.nodes[2].kernel_tier')" null "no memory_tiering is null"

# Operator override wins over the kernel.
cat >"$TMP/override.yaml" <<'YAML'
topology:
  tiers:
    - nodes: [0]
    - nodes: [1, 2]
YAML
run "$B/tierctl" topology --sysfs-root "$FX/guest-3tier" --config "$TMP/override.yaml" --json
is "$(echo "$out" | jq -c '[.tiers[].nodes]')" '[[0],[1,2]]' "config override regroups tiers"
is "$(echo "$out" | jq -r '.rank_source')" config "override is reported as the source"

# Bad input: one line on stderr, non-zero status, names what and where.
for fx in bad-distance bad-meminfo bad-nodelist missing-node-dir bad-hmat; do
	run "$B/tierctl" topology --sysfs-root "$FX/$fx"
	is "$rc" 1 "$fx: exit status 1"
	is "$(lines "$err")" 1 "$fx: one error line"
	like "$err" "$FX/$fx/devices/" "$fx: error names the file"
	is "$out" "" "$fx: nothing on stdout"
done

cat >"$TMP/unknown.yaml" <<'YAML'
topology:
  sysfs_root: /sys
  tier: []
YAML
run "$B/tierctl" topology --config "$TMP/unknown.yaml"
is "$rc" 1 "unknown config field: exit 1"
is "$err" "tierctl topology: $TMP/unknown.yaml:3:3: topology: unknown field 'tier'" "unknown config field: file, line, field"

printf 'topology:\n  tiers:\n    - nodes: zero\n' >"$TMP/type.yaml"
run "$B/tierctl" topology --config "$TMP/type.yaml"
is "$rc" 1 "wrong config type: exit 1"
like "$err" "$TMP/type.yaml:3:" "wrong config type: file and line"
like "$err" "topology.tiers[0].nodes" "wrong config type: field path"

run "$B/tierctl" topology --config "$TMP/missing.yaml"
is "$rc" 1 "missing config: exit 1"
is "$err" "tierctl topology: $TMP/missing.yaml: No such file or directory" "missing config: one clear line"

printf 'topology:\n  tiers:\n    - nodes: [0]\n' >"$TMP/partial.yaml"
run "$B/tierctl" topology --sysfs-root "$FX/guest-3tier" --config "$TMP/partial.yaml"
is "$rc" 1 "override missing a node: exit 1"
like "$err" "node 1 has memory but is in no tier of the override" "override missing a node: says which"

run "$B/tierctl" topology --bogus
is "$rc" 2 "unknown option: usage error 2"
run "$B/tierctl" frobnicate
is "$rc" 2 "unknown verb: usage error 2"
like "$err" "unknown verb 'frobnicate'" "unknown verb named"
run "$B/tierctl" topology --help
is "$rc" 0 "--help exits 0"
like "$out" "--sysfs-root" "--help lists the options"

# tierd --check: same configuration loader and topology, daemon front end.
run "$B/tierd" --check --config "$TMP/unknown.yaml"
is "$rc" 1 "tierd rejects a bad config"
is "$err" "tierd: $TMP/unknown.yaml:3:3: topology: unknown field 'tier'" "tierd: same error line"
run "$B/tierd" --check --machine sim:dram-cxl-slow --config "$TMP/missing.yaml"
is "$rc" 1 "tierd: a named config file must exist"
run "$B/tierd" --check --machine sim:dram-cxl-slow
is "$rc" 0 "tierd --check on a simulated machine"
like "$out" "3 tiers, ranked by HMAT" "simulated machine ranked from its HMAT-like figures"
run "$B/tierd" --machine dram-cxl
is "$rc" 2 "tierd --machine without sim: is a usage error"

done_testing
