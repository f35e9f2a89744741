# tiersim.sh - tiersim's machine presets on the command line.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build

run "$B/tiersim" list --json
is "$rc" 0 "list --json exits 0"
is "$(echo "$out" | jq -c '[.machines[].name] | contains(["dram-cxl","dram-cxl-slow","hbm-dram-cxl"])')" true "the required presets exist"
is "$(echo "$out" | jq -c '[.machines[] | select(.name == "dram-cxl-slow") | .nodes[].latency_ns]')" '[100,250,500]' \
	"dram-cxl-slow has the guest's latencies"
run "$B/tiersim" topology --machine dram-cxl --ratio 1:8 --json
is "$(echo "$out" | jq -c '[.nodes[].mem_total_bytes]')" "[$((1 << 30)),$((8 << 30))]" "--ratio 1:8 sets capacities"
run "$B/tiersim" topology --machine dram-cxl --ratio 1:x
is "$rc" 2 "bad --ratio: usage error"
is "$err" "tiersim topology: ratio '1:x': expected numbers like 1:4, found 'x'" "bad --ratio: one clear line"
run "$B/tiersim" topology --machine nope
like "$err" "unknown machine preset 'nope'" "unknown preset named"

done_testing
