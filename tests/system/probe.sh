# probe.sh (system) - `tierctl probe` in the three-tier guest
# (scripts/tiered-vm). The guest's three nodes are all the same host RAM
# while its HMAT claims 100/250/500 ns and 20/8/2 GiB/s: the probe must
# measure them within noise of each other, flag the claims of nodes 1 and 2
# (not node 0, the reference), find no inversion of the kernel's tier order
# (nothing measures faster than a node ranked above it) and put all three in
# one measured tier. JSON is checked here on the host (the guest has no jq).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

skip_all() {
	local d
	for d in "three nodes measured" "within noise" "claims flagged" "order" "saved" \
		"ranked by the measurement"; do
		skip "$d" "$1"
	done
	done_testing
	exit
}
[ -x "$VM" ] || skip_all "scripts/tiered-vm not found"
command -v "${TIERED_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip_all "QEMU not installed"
[ -x "$TIERED_VM_BUILD_DIR/tierctl" ] || skip_all "no tierctl in $TIERED_VM_BUILD_DIR (run make first)"

# Four parts on stdout, split on "---" lines: the probe's JSON (saved at
# the default place), the saved file shown as a table, a --nodes probe, the
# topology ranked by the saved measurement (topology.rank_by: measured).
guest_cmd='
tierctl probe --quick --json; echo "status=$?"; echo ---
tierctl probe --load /var/lib/tierd/probe.json; echo "status=$?"; echo ---
tierctl probe --quick --nodes 2 --no-save --json; echo "status=$?"; echo ---
printf "topology:\n  rank_by: measured\n" >/tmp/measured.yaml
tierctl topology --config /tmp/measured.yaml --json; echo "status=$?"
'
# no_timer_check: on a busy host the emulated guest can be too slow for the
# kernel's boot-time IO-APIC timer check, which then panics.
start=$(date +%s)
run "$VM" --timeout 150 --append no_timer_check -- sh -c "$guest_cmd"
secs=$(($(date +%s) - start))
if guest_cannot_fetch "$rc" "$err"; then
	skip_all "the test bed cannot run here: $(printf '%s\n' "$err" | tail -n 1)"
fi
is "$rc" 0 "guest ran (tiered-vm status)"
if [ "$rc" != 0 ]; then
	printf '%s\n' "$err" | tail -n 20 | sed 's/^/# /'
	skip_all "the guest did not run"
fi
# About 10 s on an idle 2-CPU host (boot included); more when it is busy.
echo "# guest boot and probes took $secs s"
printf '%s\n' "$out" | awk -v d="$TMP" '/^---$/ { n++; next } { print > (d "/part" n) }'
probe=$(grep -v '^status=' "$TMP/part" 2>/dev/null)
table=$(grep -v '^status=' "$TMP/part1" 2>/dev/null)
subset=$(grep -v '^status=' "$TMP/part2" 2>/dev/null)
measured=$(grep -v '^status=' "$TMP/part3" 2>/dev/null)
is "$(grep -h '^status=' "$TMP"/part* 2>/dev/null | tr '\n' ' ')" "status=0 status=0 status=0 status=0 " \
	"probe, --load, --nodes and topology by the measurement all exit 0 in the guest"

j() { printf '%s\n' "$probe" | jq -c "$@" 2>&1; }
is "$(j '[.nodes[].id]')" "[0,1,2]" "three nodes measured"
is "$(j '[.initiators[] | [.id, .reference]]')" "[[0,0]]" "node 0 is the initiator and the reference"
is "$(j '[.nodes[].claim.read_latency_ns]')" "[100,250,500]" "HMAT claims 100/250/500 ns"
is "$(j '[.nodes[].kernel_rank]')" "[0,1,2]" "the kernel ranks them 0, 1, 2"
is "$(j '[.nodes[].from[0].on_node_pct]')" "[100,100,100]" "each buffer's pages were on its node"
is "$(j '[.nodes[] | .latency_ns > 0 and .read_bandwidth_mbps > 0 and .write_bandwidth_mbps > 0] | all')" \
	true "latency and bandwidths measured on every node"

# Within noise of each other, by the documented rule: a node's ratio to
# node 0 is off 1 by no more than the tolerance plus the larger noise.
within='
def off(q): if q >= 1 then q else 1 / q end;
.tolerance_pct as $tol | (.nodes[0].noise_pct) as $s0 |
[.nodes[1:][] | . as $n | ["latency", "read_bandwidth", "write_bandwidth"][] as $f |
 { node: $n.id, figure: $f, ratio: $n.ratio[$f],
   ok: (off($n.ratio[$f]) <= 1 + ($tol + ([$n.noise_pct[$f], $s0[$f]] | max)) / 100) }]'
is "$(j "$within | map(select(.ok | not))")" "[]" "nodes 1 and 2 measure within noise of node 0"
is "$(j "$within | map(.ratio) | map(. > 0.5 and . < 2) | all")" true "and within a factor of two at worst"

is "$(j '[.nodes[].claim_mismatch]')" "[false,true,true]" "claims of nodes 1 and 2 flagged, node 0's not"
is "$(j '[.nodes[1,2].mismatch | index("latency") != null]')" "[true,true]" "latency claims of nodes 1 and 2 contradicted"
is "$(j '[.nodes[1,2].mismatch | index("read_bandwidth") != null]')" "[true,true]" \
	"read bandwidth claims of nodes 1 and 2 contradicted"
is "$(j '[.nodes[].claimed_ratio.latency]')" "[1,2.5,5]" "claimed latency ratios 1, 2.5, 5"
is "$(j '[.nodes[].order_mismatch]')" "[false,false,false]" "no inversion of the kernel's order"
is "$(j '[.nodes[].measured_rank]')" "[0,0,0]" "all three measure as one tier"

# The saved file, read back in the guest.
like "$table" "claim mismatch" "saved results read back: table shows the mismatch"
like "$table" "node 2: latency: HMAT says 5.00x slower than node 0, measured " "table explains node 2's latency claim"
is "$(printf '%s\n' "$table" | grep -cE '^[12] +0 .*claim mismatch')" 2 "table rows of nodes 1 and 2 say claim mismatch"

# --nodes 2: node 0 comes along as the reference.
is "$(printf '%s\n' "$subset" | jq -c '[.nodes[].id]' 2>&1)" "[0,2]" "--nodes 2 probes node 2 and the reference"
is "$(printf '%s\n' "$subset" | jq -c '[.nodes[].claim_mismatch]' 2>&1)" "[false,true]" "--nodes 2: node 2 flagged"

# The tier model ranked by the saved measurement: the three nodes that the
# kernel puts in three tiers measure alike, so they form one tier.
is "$(printf '%s\n' "$measured" | jq -c '[.rank_source, [.tiers[] | [.rank, .nodes]]]' 2>&1)" \
	'["measured",[[0,[0,1,2]]]]' "rank_by: measured: one tier of nodes 0, 1, 2 from the saved probe"

# On a failure, the figures behind it.
if [ "$_tap_failed" != 0 ]; then
	j '.nodes[] | {id, latency_ns, read_bandwidth_mbps, write_bandwidth_mbps, noise_pct,
		ratio, mismatch, measured_adistance,
		samples: [.from[0] | .latency_ns, .read_bandwidth_mbps | [.min, .q1, .median, .q3, .max]]}' |
		sed 's/^/# /'
fi
done_testing
