# topology.sh - topology discovery on a real kernel: the QEMU guest whose
# firmware (HMAT) describes three memory tiers (scripts/tiered-vm).
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
VM="$ROOT/scripts/tiered-vm"
export TIERED_VM_BUILD_DIR=${TIERD_BUILD:-$ROOT/build}

if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "guest topology" "qemu-system-x86_64 is not installed (scripts/install-deps)"
	done_testing
	exit
fi

# Default guest: 100/250/500 ns, 20/8/2 GB/s, 512 MiB each.
run "$VM" -- tierctl topology --json
is "$rc" 0 "tierctl topology --json in the guest exits 0"
is "$(echo "$out" | jq -c '[.tiers[] | [.rank, .nodes]]')" '[[0,[0]],[1,[1]],[2,[2]]]' \
	"three tiers, ranks 0,1,2 holding nodes 0,1,2"
is "$(echo "$out" | jq -c '[.nodes[].hmat | [.read_latency_ns, .write_latency_ns]]')" \
	'[[100,100],[250,250],[500,500]]' "HMAT latencies the guest was given"
is "$(echo "$out" | jq -c '[.nodes[].hmat | [.read_bandwidth_mbps, .write_bandwidth_mbps]]')" \
	'[[20480,20480],[8192,8192],[2048,2048]]' "HMAT bandwidths the guest was given"
is "$(echo "$out" | jq -c '[.nodes[].kernel_tier]')" '[4,28,225]' "the kernel's memory tiers"
is "$(echo "$out" | jq -r '.rank_source')" kernel "ranked by the kernel's memory tiers"
is "$(echo "$out" | jq -c '[.nodes[].cpus]')" '[[0,1],[],[]]' "CPUs on node 0 only"
check "each node reports its memory" test "$(echo "$out" | jq '[.nodes[] | select(.mem_total_bytes > 400000000)] | length')" = 3
is "$(echo "$out" | jq -c '[.nodes[].distance]')" '[[10,25,50],[25,10,50],[50,50,10]]' "SLIT distances"

# Two nodes of another shape; an operator override in a config file.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/override-tiers.sh" <<'SH'
#!/bin/sh
mkdir -p /etc/tierd
printf 'topology:\n  tiers:\n    - nodes: [0, 1]\n' > /etc/tierd/tierd.yaml
exec tierctl topology --json
SH
chmod +x "$TMP/override-tiers.sh"
run "$VM" --topology "90:40G 300:4G:256" --files "$TMP/override-tiers.sh" -- override-tiers.sh
is "$rc" 0 "two-node guest with a config override exits 0"
is "$(echo "$out" | jq -c '[.nodes[].hmat.read_latency_ns]')" '[90,300]' "two-node guest: its latencies"
is "$(echo "$out" | jq -c '[.tiers[].nodes]')" '[[0,1]]' "the default config file's override regroups the tiers"
is "$(echo "$out" | jq -r '.rank_source')" config "override reported as the source"

# tierd --check on the real kernel.
run "$VM" -- tierd --check
is "$rc" 0 "tierd --check in the guest exits 0"
like "$out" "3 tiers, ranked by the kernel's memory tiers" "tierd sees the three tiers"

done_testing
