#!/bin/sh
# devices-guest.sh - runs inside the guest of tests/system/devices.sh
# (nodes 0 and 1, an emulated NVDIMM on node 2): a devdax namespace onlined
# by tierctl into a new tier, a workload's cold pages demoted onto it, the
# node drained and offlined, the device back to devdax, the data intact;
# bad input refused with one line and nothing changed. TAP lines without
# numbers; ends with "guest-done".
. /usr/local/bin/guest-lib.sh
K=/usr/local/bin/keeper
W=/usr/local/bin/where

echo 0 >/proc/sys/kernel/numa_balancing
[ -w /sys/kernel/mm/numa/demotion_enabled ] && echo false >/sys/kernel/mm/numa/demotion_enabled

dax_mode() { daxctl list -d dax0.0 2>/dev/null | sed -n 's/.*"mode":"\([^"]*\)".*/\1/p'; }

ndctl create-namespace -f -e namespace0.0 -m devdax --map=mem >/tmp/ns 2>&1
check "ndctl: a devdax namespace on the NVDIMM" grep -q '"mode":"devdax"' /tmp/ns
tierctl device list --json >/tmp/list 2>&1
check "device list: dax0.0 in devdax mode" grep -q '"mode":"devdax"' /tmp/list
check "device list: its target node is 2" grep -q '"target_node":2' /tmp/list
echo "# $(tierctl device list | head -n 2 | tail -n 1)"

mkdir -p /etc/tierd
cat >/etc/tierd/tierd.yaml <<'YAML'
daemon:
  interval_ms: 100
processes:
  exe: "keeper"
  min_rss_mb: 16
YAML
tierd --foreground >/tmp/tierd.log 2>&1 &
TIERD=$!
if ! wait_socket; then
	notok "tierd answers"
	sed 's/^/# /' /tmp/tierd.log
	echo guest-done
	exit 0
fi

# Bad input: an unknown device; a device in use.
tierctl device online dax9.9 >/tmp/o 2>/tmp/e
rc=$?
check "online of an unknown device: status 1" [ $rc = 1 ]
check "online of an unknown device: one line naming it" sh -c '[ "$(wc -l </tmp/e)" -eq 1 ] && grep -q "dax9.9: no such device" /tmp/e'
sleep 600 </dev/dax0.0 &
HOLDER=$!
sleep 0.2
tierctl device online dax0.0 --tier 2 >/tmp/o 2>/tmp/e
rc=$?
check "online of a device in use: status 1" [ $rc = 1 ]
check "online of a device in use: one line saying who holds it" sh -c '[ "$(wc -l </tmp/e)" -eq 1 ] && grep -q "is in use: process '"$HOLDER"'" /tmp/e'
check "the device in use is still devdax" [ "$(dax_mode)" = devdax ]
kill $HOLDER
wait $HOLDER 2>/dev/null
tierctl device online dax0.0 --tier 3 >/tmp/o 2>/tmp/e
rc=$?
check "online into a tier that does not exist: status 1" [ $rc = 1 ]
check "online into a tier that does not exist: refused, one line" sh -c '[ "$(wc -l </tmp/e)" -eq 1 ] && grep -q "must be 0..2" /tmp/e'
check "refused online: still devdax" [ "$(dax_mode)" = devdax ]

# Online into a new slowest tier (ranks 0 and 1 exist).
tierctl device online dax0.0 --tier 2 >/tmp/o 2>/tmp/e
rc=$?
check "device online dax0.0 --tier 2: status 0" [ $rc = 0 ]
sed 's/^/# /' /tmp/o /tmp/e
check "dax0.0 is system-ram now" [ "$(dax_mode)" = system-ram ]
check "node 2 has memory" grep -q 'MemTotal: *[1-9]' /sys/devices/system/node/node2/meminfo
check "its memory blocks are movable" sh -c '! grep -qv Movable /sys/devices/system/node/node2/memory*/valid_zones'
tierctl topology --json >/tmp/topo
check "topology: node 2 is CPU-less with memory" grep -q '"id":2,"cpus":\[\]' /tmp/topo
tierctl status --json >/tmp/st
check "status: tierd places node 2 in tier 2" grep -q '"rank":2,"nodes":\[2\]' /tmp/st
tierctl device list --json >/tmp/list
check "device list: node 2, tier 2" sh -c 'grep -q "\"node\":2" /tmp/list && grep -q "\"tier\":2" /tmp/list'
echo "# $(tierctl device list | head -n 2 | tail -n 1)"

# A workload's cold pages go onto the device (intent: cold -> slowest tier).
$K 64 >/tmp/keeper 2>&1 &
KP=$!
wait_for /tmp/keeper '^ready$' 300 || notok "keeper started"
line=$(grep '^keeper ' /tmp/keeper)
echo "# $line"
range=$(echo "$line" | sed -n 's/.* range=\([^ ]*\).*/\1/p')
start=${range%-*}
end=${range#*-}
len=$(($end - $start))
i=0
while ! tierctl hint "$KP" "$start" "$len" cold >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -gt 100 ] && break; sleep 0.1
done
echo "# before: $($W "$KP" "$range")"
i=0
while :; do
	on2=$($W "$KP" "$range" | sed -n 's/.*node2=\([0-9]*\).*/\1/p')
	[ "${on2:-0}" -ge 16384 ] && break
	i=$((i + 1)); [ $i -gt 600 ] && break
	sleep 0.1
done
echo "# demoted after $((i / 10)) s: $($W "$KP" "$range")"
check "the cold pages are on node 2 (move_pages): ${on2:-0} of 16384" [ "${on2:-0}" -ge 16000 ]

# Bad input: a node with unmovable pages.
tierctl node drain 0 --offline >/tmp/o 2>/tmp/e
rc=$?
check "drain of node 0: status 1" [ $rc = 1 ]
check "drain of node 0: one line saying why" sh -c '[ "$(wc -l </tmp/e)" -eq 1 ] && grep -q "node 0 has CPUs" /tmp/e'
tierctl status --json >/tmp/st
check "drain of node 0 refused: no drain started" grep -q '"drains":\[\]' /tmp/st

# Drain node 2 and offline it: its pages go to node 1, the next tier, and
# the workload's pages elsewhere stay (the demotion above may leave a few
# hundred of them on node 0 or 1 when the wait ends).
before=$($W "$KP" "$range")
echo "# before the drain: $before"
b0=$(echo "$before" | sed -n 's/.*node0=\([0-9]*\).*/\1/p')
b1=$(echo "$before" | sed -n 's/.*node1=\([0-9]*\).*/\1/p')
b2=$(echo "$before" | sed -n 's/.*node2=\([0-9]*\).*/\1/p')
tierctl node drain 2 --offline --json >/tmp/drain 2>/tmp/e
rc=$?
check "node drain 2 --offline: status 0" [ $rc = 0 ]
sed 's/^/# /' /tmp/e
head -n 1 /tmp/drain | sed 's/^/# first: /'
tail -n 2 /tmp/drain | sed 's/^/# /'
check "drain progress in JSON, ending done" grep -q '"state":"done"' /tmp/drain
check "offline reported, dax0.0 named" grep -q '"state":"offline","device":"dax0.0"' /tmp/drain
after=$($W "$KP" "$range")
echo "# after: $after"
check "no page left on node 2 (move_pages)" sh -c "echo '$after' | grep -q 'node2=0 '"
check "node 2's $b2 pages are on node 1, the next tier, the others where they were" \
	sh -c "echo '$after' | grep -q 'node0=$b0 node1=$(($b1 + $b2)) '"
check "dax0.0 is devdax again" [ "$(dax_mode)" = devdax ]
check "node 2 has no memory" sh -c '! grep -q "MemTotal: *[1-9]" /sys/devices/system/node/node2/meminfo 2>/dev/null'
kill -USR1 $KP
wait_for /tmp/keeper '^sum=' 100
check "the workload's data is intact (checksum)" grep -q '^sum=.* ok$' /tmp/keeper
grep '^sum=' /tmp/keeper | sed 's/^/# /'
tierctl status --json >/tmp/st
check "status: the drain of node 2 is done" grep -q '"node":2,"state":"done"' /tmp/st
check "status: the drain moved node 2's $b2 pages" grep -q '"node":2,"state":"done",[^}]*"moved_bytes":'"$(($b2 * 4096))," /tmp/st
check "status: a line for the drained node" sh -c 'tierctl status | grep -q "node 2 drained: .* moved off, 0 B left"'
tierctl status | grep 'node 2' | sed 's/^/# /'

kill $KP $TIERD 2>/dev/null
wait $TIERD 2>/dev/null
echo guest-done
