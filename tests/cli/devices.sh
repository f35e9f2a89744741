# devices.sh - the memory-device verbs' bad input on any machine (the flow
# itself runs in the guest: tests/system/devices.sh): usage errors, an
# unknown device, a node whose memory cannot be drained, drain and
# node-tier requests a simulated machine refuses, and the configuration's
# devices section. Each refusal is one line and changes nothing.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

one_line() { [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ]; }

run "$B/tierctl" device
is "$rc" 2 "device without an action: usage error"
run "$B/tierctl" device frob
is "$rc" 2 "device frob: usage error"
like "$err" "unknown action 'frob'" "device frob: says so"
run "$B/tierctl" device online
is "$rc" 2 "device online without a device: usage error"
like "$err" "no device given" "device online: no device given"
run "$B/tierctl" device online dax0.0 --tier x
is "$rc" 2 "device online --tier x: usage error"
like "$err" "bad --tier 'x'" "device online --tier x: names it"
run "$B/tierctl" node drain abc
is "$rc" 2 "node drain abc: usage error"
like "$err" "NODE must be a node id" "node drain abc: says why"
run "$B/tierctl" node drain
is "$rc" 2 "node drain without a node: usage error"

run "$B/tierctl" device list --json
is "$rc" 0 "device list --json exits 0"
is "$(echo "$out" | jq -c '[(.dax | type), (.cxl.memdevs | type), (.cxl.regions | type), (.tierd | type)]')" \
	'["array","array","array","boolean"]' "device list --json: dax, cxl memdevs and regions, tierd"
run "$B/tierctl" device list
is "$rc" 0 "device list exits 0"
like "$out" "device-DAX:" "device list: a table"

TIERD_SOCKET=$TMP/none.sock run "$B/tierctl" device online nosuch9.9
is "$rc" 1 "online of an unknown device: status 1"
like "$err" "nosuch9.9: no such device-DAX device" "online of an unknown device: names it"
check "online of an unknown device: one line" one_line "$err"

# Node 0 of a machine holds its CPUs (the development machines, CI).
if [ -n "$(cat /sys/devices/system/node/node0/cpulist 2>/dev/null)" ]; then
	run "$B/tierctl" node drain 0 --offline
	is "$rc" 1 "drain --offline of the CPUs' node: status 1"
	like "$err" "node 0 has CPUs" "drain --offline of node 0: says why"
	check "drain --offline of node 0: one line" one_line "$err"
else
	skip "drain --offline of the CPUs' node" "node 0 has no CPUs here"
fi
run "$B/tierctl" node drain 250 --offline
is "$rc" 1 "drain --offline of a node that does not exist: status 1"
like "$err" "node 250 does not exist" "drain of node 250: says so"

# Against a daemon on a simulated machine: its nodes never change.
printf 'daemon:\n  interval_ms: 100\n' >"$CONF"
start_sim_tierd
until_ok 30 "$B/tierctl" status --socket "$SOCK" >/dev/null
export TIERD_SOCKET=$SOCK
run "$B/tierctl" node drain 7
is "$rc" 1 "drain of a node in no tier: status 1"
like "$err" "drain: node 7 is in no tier" "drain of node 7: says why"
run "$B/tierctl" node drain 1
is "$rc" 1 "drain on a simulated machine: status 1"
like "$err" "its nodes never change" "drain on a simulated machine: says why"
check "drain refused: one line" one_line "$err"
run "$B/tierctl" status --json
is "$(echo "$out" | jq -c '.drains')" '[]' "refused drains: none under way"
is "$(echo "$out" | jq -c '[.tiers[].nodes]')" '[[0],[1]]' "refused drains: the tiers as they were"
unset TIERD_SOCKET

# The configuration's devices.
printf 'devices:\n  - name: dax0.0\n    tier: 9\n' >"$TMP/bad.yaml"
run "$B/tierd" --config "$TMP/bad.yaml" --check
is "$rc" 1 "a device's tier out of range: tierd --check fails"
like "$err" "devices[0].tier: 9 is outside 0..7" "names the field"
printf 'devices:\n  - name: dax0.0\n  - name: dax0.0\n' >"$TMP/bad.yaml"
run "$B/tierd" --config "$TMP/bad.yaml" --check
is "$rc" 1 "a device listed twice: tierd --check fails"
like "$err" "devices[1].name: 'dax0.0' is listed twice" "names the second"
printf 'devices:\n  - name: dax0.0\n    tier: 1\n' >"$TMP/dev.yaml"
run "$B/tierd" --machine sim:dram-cxl --config "$TMP/dev.yaml" --socket "$TMP/s2.sock" --foreground
is "$rc" 1 "devices on a simulated machine: tierd does not start"
like "$err" "devices[0] (dax0.0): sim:dram-cxl has no devices" "says why"

done_testing
