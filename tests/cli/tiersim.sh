# tiersim.sh - tiersim's machine presets on the command line.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}

run "$B/tiersim" list --json
is "$rc" 0 "list --json exits 0"
is "$(echo "$out" | jq -c '[.machines[].name] | contains(["dram-cxl","dram-cxl-slow","hbm-dram-cxl"])')" true "the required presets exist"
is "$(echo "$out" | jq -c '[.machines[] | select(.name == "dram-cxl-slow") | .nodes[].latency_ns]')" '[100,250,500]' \
	"dram-cxl-slow has the guest's latencies"
# Peers as upstream runs them by default; the variants run only when named.
run "$B/tiersim" list --json
is "$(echo "$out" | jq -c '[.policies[] | select(.variant_of != null) | [.name, .variant_of]]')" \
	'[["tpp","kernel-nb"],["memtierd-heat-gated","memtierd-heat"],["damon-fixed-quota","damon"]]' \
	"list: the variants and what they vary"
run "$B/tiersim" topology --machine dram-cxl --ratio 1:8 --json
is "$(echo "$out" | jq -c '[.nodes[].mem_total_bytes]')" "[$((1 << 30)),$((8 << 30))]" "--ratio 1:8 sets capacities"
run "$B/tiersim" topology --machine dram-cxl --ratio 1:x
is "$rc" 2 "bad --ratio: usage error"
is "$err" "tiersim topology: ratio '1:x': expected numbers like 1:4, found 'x'" "bad --ratio: one clear line"
run "$B/tiersim" topology --machine nope
like "$err" "unknown machine preset 'nope'" "unknown preset named"

# Machine files (docs/tiersim.md): --machine file:PATH, same YAML library as
# tierd's configuration, errors as FILE:LINE:COL: field: reason.
MF=$ROOT/tests/fixtures/machines
run "$B/tiersim" topology --machine "file:$MF/dram-cxl-pmem.yaml" --json
is "$rc" 0 "topology --machine file: exits 0"
is "$(echo "$out" | jq -c '[.nodes[].mem_total_bytes]')" "[$((1 << 30)),$((2 << 30)),$((4 << 30))]" \
	"machine file: capacities from its ratios"
is "$(echo "$out" | jq -c '[(.tiers | length), (.nodes[0].cpus | length)]')" "[3,4]" \
	"machine file: three tiers, CPUs on the first node"
run "$B/tiersim" topology --machine "file:$MF/dram-cxl-pmem.yaml"
like "$out" "machine dram-cxl-pmem" "topology names the file's machine"
run "$B/tiersim" topology --machine "file:$MF/no-cpus.yaml"
is "$rc" 2 "machine file without a CPU node: usage error"
is "$err" "tiersim topology: $MF/no-cpus.yaml:2:1: nodes: no node has CPUs (give one node cpus: N)" \
	"machine file without a CPU node: one line with file, line, column"


# run and compare: the JSON contract, determinism, errors.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SMALL="--unit 8388608 --duration 2"
run "$B/tiersim" run --workload gups-hotset --policy tierd $SMALL --json
is "$rc" 0 "run --json exits 0"
is "$(echo "$out" | jq -c '[has("workload"),has("policy"),has("amat_ns"),has("fast_access_ratio"),has("migrated_bytes"),has("accesses")] | all')" true \
	"run --json has the contract's fields"
is "$(echo "$out" | jq -r '.machine')" dram-cxl "run defaults to dram-cxl"
check "tierd beats first touch on gups-hotset" test "$(echo "$out" | jq '.fast_access_ratio > 0.6')" = true

# Progress: on a terminal only (stderr), never in the output.
run "$B/tiersim" run --workload uniform --policy static $SMALL
is "$err" "" "run: no progress when stderr is not a terminal"
if command -v script >/dev/null; then
	script -qec "$B/tiersim compare --workloads uniform --policies static,oracle $SMALL --json >$TMP/tty.json" \
		/dev/null >"$TMP/tty.log" 2>&1
	like "$(tr '\r' '\n' <"$TMP/tty.log")" "[2/2] uniform/oracle" "compare: progress on a terminal"
	is "$(jq '.results | length' "$TMP/tty.json")" 2 "compare: JSON on stdout while progress shows"
else
	skip "compare: progress on a terminal" "script(1) not installed"
	skip "compare: JSON on stdout while progress shows" "script(1) not installed"
fi

run "$B/tiersim" compare --workloads uniform $SMALL --json
is "$(echo "$out" | jq -c '[.results[].policy]')" \
	'["tierd","static","hemem","memtis","memtierd-heat","kernel-nb","damon","oracle"]' \
	"compare: no variant unless named"
run "$B/tiersim" compare --workloads uniform --policies tpp,damon-fixed-quota $SMALL --json
is "$(echo "$out" | jq -c '[.results[].policy]')" '["tpp","damon-fixed-quota"]' "compare: a variant runs when named"
run "$B/tiersim" compare --workloads gups-hotset,zipf --policies static,tierd,oracle $SMALL --json --seed 3
first=$out
run "$B/tiersim" compare --workloads gups-hotset,zipf --policies static,tierd,oracle $SMALL --json --seed 3
is "$out" "$first" "compare: same seed, same output byte for byte"
is "$(echo "$out" | jq '.results | length')" 6 "compare: workloads x policies results"
is "$(echo "$out" | jq '[.results[] | select(.policy == "oracle") | .amat_ns] | length')" 2 "compare includes the oracle"
run "$B/tiersim" compare --workloads gups-hotset --policies static,tierd $SMALL --json --seed 4
check "a different seed gives different figures" test "$out" != "$first"

# The cost model: the slowdown next to AMAT; a scan-only policy costs
# the application only when the scans share its cores.
run "$B/tiersim" run --workload gups-hotset --policy static --tracker idle $SMALL --json
shared=$out
run "$B/tiersim" run --workload gups-hotset --policy static --tracker idle $SMALL --json --app-cores 1
is "$(echo "$shared" | jq -c '[.machine_cores, .app_cores, .migrated_bytes, .slowdown > 1]')" '[2,2,0,true]' \
	"run: a scan-only policy slows the application on its cores"
is "$(echo "$out" | jq -c '[.app_cores, .slowdown, .daemon_cpu_on_app_seconds]')" '[1,1,0]' \
	"run --app-cores 1: the scans on the spare core cost nothing"
run "$B/tiersim" run --workload gups-hotset --policy static --tracker idle $SMALL
like "$out" "slowdown           1.0" "run prints the slowdown"
run "$B/tiersim" compare --workloads gups-hotset --policies static,oracle $SMALL --app-cores 1
like "$out" "the application on 1 of 2 cores" "compare names the application's cores"
like "$out" "x1.0" "compare prints the slowdown next to AMAT"

run "$B/tiersim" compare --workloads gups-hotset,uniform --policies static,oracle $SMALL --plot "$TMP/amat.png"
is "$rc" 0 "compare --plot exits 0"
is "$(head -c 8 "$TMP/amat.png" | od -An -c | tr -d ' ')" '211PNG\r\n032\n' "compare --plot writes a PNG"
like "$out" "gups-hotset" "compare prints a table"

run "$B/tiersim" run --machine "file:$MF/dram-cxl-pmem.yaml" --workload gups-hotset --policy tierd $SMALL --json
is "$rc" 0 "run --machine file: exits 0"
is "$(echo "$out" | jq -c '[.machine, (.moved_bytes_by_tier | length)]')" '["dram-cxl-pmem",3]' \
	"run on a machine file: its name and three tiers"
printf 'nodes:\n  - kind: dram\n    latency_ns: 0\n    read_bw_mbps: 1\n    write_bw_mbps: 1\n    ratio: 1\n    cpus: 1\n' >"$TMP/zero.yaml"
run "$B/tiersim" run --machine "file:$TMP/zero.yaml" --workload gups-hotset --policy tierd $SMALL
is "$rc" 2 "run on a bad machine file: usage error"
is "$err" "tiersim run: $TMP/zero.yaml:3:5: nodes[0].latency_ns: must be positive" "bad machine file: one clear line"
printf 'nodes:\n  - kind: dram\n    latency_ns: 90\n    speed: 3\n' >"$TMP/unknown.yaml"
run "$B/tiersim" compare --machine "file:$TMP/unknown.yaml" $SMALL
is "$err" "tiersim compare: $TMP/unknown.yaml:4:5: nodes[0]: unknown field 'speed'" "machine file: unknown field named"

# 2 MiB pages (THP): whole units move; deterministic; different from 4 KiB.
run "$B/tiersim" run --workload gups-hotset --policy tierd $SMALL --json --thp
is "$rc" 0 "run --thp exits 0"
thp=$out
is "$(echo "$out" | jq -c '[.thp, .migrated_bytes > 0, .migrated_bytes % 2097152]')" '[true,true,0]' \
	"run --thp: moves whole 2 MiB units"
run "$B/tiersim" run --workload gups-hotset --policy tierd $SMALL --json --thp
is "$out" "$thp" "run --thp: same seed, same output"
run "$B/tiersim" run --workload gups-hotset --policy tierd $SMALL --json
check "run --thp differs from 4 KiB pages" test "$(echo "$out" | jq -c 'del(.thp)')" != "$(echo "$thp" | jq -c 'del(.thp)')"
run "$B/tiersim" compare --workloads zipf --policies static,oracle $SMALL --json --thp
is "$(echo "$out" | jq -c '[.thp, ([.results[].thp] | all)]')" '[true,true]' "compare --thp"

run "$B/tiersim" run --workload phase-change --policy tierd $SMALL --timeline "$TMP/t.csv"
is "$rc" 0 "run --timeline exits 0"
like "$(head -1 "$TMP/t.csv")" "time_s,amat_ns,fast_access_ratio" "timeline CSV header"
is "$(($(wc -l <"$TMP/t.csv") - 1))" 20 "timeline: one row per 100 ms"

for bad in "--workload nope --policy tierd|unknown workload 'nope'" \
	"--workload gups-hotset --policy nope|unknown policy 'nope'" \
	"--machine nope --workload gups-hotset --policy tierd|unknown machine preset 'nope'" \
	"--workload gups-hotset --policy tierd --tracker pebs|unknown tracker 'pebs'" \
	"--workload gups-hotset --policy tierd --duration -1|--duration '-1'" \
	"--workload gups-hotset --policy tierd --seed x|--seed 'x'" \
	"--workload trace:$TMP/none.trace --policy tierd|$TMP/none.trace"; do
	args=${bad%%|*}
	want=${bad#*|}
	# shellcheck disable=SC2086
	run "$B/tiersim" run $args $SMALL
	is "$rc" 2 "run $args: usage error"
	like "$err" "$want" "run $args: says what"
	is "$(lines "$err")" 1 "run $args: one line"
done
run "$B/tiersim" run --workload gups-hotset
is "$rc" 2 "run without --policy: usage error"

# Workload parameters (NAME:key=value[:key=value]): the defaults written
# out give the same run; a larger hot share or a steeper Zipf law puts more
# of the accesses within the oracle's reach of the fast tier.
run "$B/tiersim" list --json
is "$(echo "$out" | jq -c '[.workloads[] | select(.params != null) | [.name, .params]]')" \
	'[["gups-hotset","hot=0.4:share=0.9"],["gups-moving-hotset","hot=0.4:share=0.9"],["zipf","alpha=0.99"],["bandwidth-antagonist","hot=0.4:share=0.9"],["gups-guest","layout=contiguous:rate=9.23"]]' \
	"list: the parameters each workload takes, with their defaults"
wl_ratio() { # WORKLOAD POLICY -> fast_access_ratio
	"$B/tiersim" run --workload "$1" --policy "$2" $SMALL --json | jq '.fast_access_ratio'
}
run "$B/tiersim" run --workload gups-hotset:hot=0.4:share=0.9 --policy tierd $SMALL --json
is "$(echo "$out" | jq -c 'del(.workload)')" \
	"$("$B/tiersim" run --workload gups-hotset --policy tierd $SMALL --json | jq -c 'del(.workload)')" \
	"gups-hotset with its defaults written out: the same run"
is "$(echo "$out" | jq -r '.workload')" "gups-hotset:hot=0.4:share=0.9" "the result names the parameters"
check "gups-hotset:hot=0.2:share=0.99: more accesses in the fast tier than the defaults" \
	awk -v a="$(wl_ratio gups-hotset:hot=0.2:share=0.99 oracle)" -v b="$(wl_ratio gups-hotset oracle)" \
	'BEGIN { exit !(a > b + 0.05) }'
check "zipf:alpha=1.3: more accesses in the fast tier than alpha 0.99" \
	awk -v a="$(wl_ratio zipf:alpha=1.3 oracle)" -v b="$(wl_ratio zipf oracle)" 'BEGIN { exit !(a > b + 0.05) }'
for bad in "uniform:hot=1|workload 'uniform' takes no parameters (got 'hot=1')" \
	"zipf:beta=2|workload 'zipf': unknown parameter 'beta' (takes alpha, as key=value)" \
	"gups-hotset:hot=3|workload 'gups-hotset': hot '3': expected a number above 0 and at most 2" \
	"gups-hotset:share=x|workload 'gups-hotset': share 'x': expected a number above 0 and at most 1"; do
	w=${bad%%|*}
	want=${bad#*|}
	run "$B/tiersim" run --workload "$w" --policy tierd $SMALL
	is "$rc:$err" "2:tiersim run: $want" "run --workload $w: usage error, one line"
done
run "$B/tiersim" compare --workloads gups-hotset,zipf:alpha=0 --policies static --duration 600
is "$rc:$err" "2:tiersim compare: workload 'zipf': alpha '0': expected a number above 0 and at most 10" \
	"compare: a bad parameter is reported before any run"

# compare checks every name before it runs anything: a typo at the end of a
# list is reported at once, not after the runs before it.
for bad in "--workloads gups-hotset,nope --policies static|unknown workload 'nope'" \
	"--workloads gups-hotset --policies static,oracle,nope|unknown policy 'nope'"; do
	args=${bad%%|*}
	want=${bad#*|}
	# shellcheck disable=SC2086
	run "$B/tiersim" compare $args --duration 600
	is "$rc:$(lines "$err")" "2:1" "compare $args: usage error, one line"
	is "$err" "tiersim compare: $want (see 'tiersim list')" "compare $args: names it before any run"
done

# The footprint follows the machine: at 1:8 the fast tier holds a smaller
# share of the data than at 1:4, so first touch serves fewer accesses there.
f4=$("$B/tiersim" run --workload uniform --policy static $SMALL --ratio 1:4 --json | jq '.fast_access_ratio')
f8=$("$B/tiersim" run --workload uniform --policy static $SMALL --ratio 1:8 --json | jq '.fast_access_ratio')
check "a 1:8 machine keeps a smaller share in the fast tier than 1:4 ($f8 < $f4)" \
	awk -v a="$f8" -v b="$f4" 'BEGIN { exit !(a < b * 0.8) }'

# The oracle is a lower bound on the whole default suite: every workload x
# every policy but the named variants, on a two- and a three-tier machine.
for m in dram-cxl dram-cxl-slow; do
	run "$B/tiersim" compare --machine "$m" $SMALL --json
	is "$rc" 0 "compare on $m: the default suite runs"
	is "$(echo "$out" | jq '[.results[].workload] | unique | length')" \
		"$("$B/tiersim" list --json | jq '[.workloads[] | select(.named_only | not)] | length')" \
		"compare on $m: every built-in workload but those run only when named"
	is "$(echo "$out" | jq '[.results[].policy] | unique | length')" \
		"$("$B/tiersim" list --json | jq '[.policies[] | select(.variant_of == null)] | length')" \
		"compare on $m: every policy but the variants, and the oracle"
	worse=$(echo "$out" | jq -r '[.results | group_by(.workload)[] |
		(map(select(.policy == "oracle"))[0].amat_ns) as $o |
		.[] | select(.policy != "oracle" and .amat_ns < $o) | "\(.workload)/\(.policy)"] | join(" ")')
	is "$worse" "" "compare on $m: the oracle's AMAT is <= every policy's on every workload"
done

done_testing
