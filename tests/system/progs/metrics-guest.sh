#!/bin/sh
# metrics-guest.sh - runs inside the tiered guest for tests/system/metrics.sh:
# tierd with its metrics endpoint on loopback manages a memhog in a capped
# control group whose hot set starts on node 1; a scrape (busybox wget)
# shows the group's use, cap and weight, the process by name, promotions
# by tier pair, the tracker's and kdamond's CPU. Prints TAP lines without
# numbers, then the scrape, each line prefixed "scrape| ", for the host's
# parser; ends with "guest-done".
HOG=/usr/local/bin/memhog
LOG=/tmp/tierd.log
CG=/sys/fs/cgroup
URL=http://127.0.0.1:9464/metrics

. /usr/local/bin/guest-lib.sh

# sample FILE PATTERN: the value of the first sample line matching PATTERN.
sample() { grep -F "$2" "$1" | head -n 1 | awk '{ print $NF }'; }
# sum FILE PREFIX: the sum of the samples whose line starts with PREFIX.
sum() { grep -F "$2" "$1" | awk '{ s += $NF } END { printf "%.0f\n", s }'; }

ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
echo "+memory" >"$CG/cgroup.subtree_control" 2>/dev/null
mkdir -p "$CG/capped"
sh -c "echo \$\$ >$CG/capped/cgroup.procs && exec $HOG --mib 128 --hot-mib 96 --hot-node 1" \
	>/tmp/hog.out 2>&1 &
hog=$!
wait_for /tmp/hog.out '^ready$' 900 || { notok "memhog ready"; sed 's/^/# /' /tmp/hog.out; }
echo "# $(grep '^memhog ' /tmp/hog.out)"

mkdir -p /etc/tierd
cat >/etc/tierd/tierd.yaml <<YAML
daemon:
  interval_ms: 200
  # QEMU's emulation makes a step cost tens of times what it does on
  # hardware: let tierd use half a core.
  max_cpu_percent: 50
  metrics: 127.0.0.1:9464
processes:
  min_rss_mb: 64
cgroups:
  - path: capped
    tier_max: ["0=64M"]
    weight: 50
YAML
tierd --foreground 2>$LOG &
tierd_pid=$!
check "tierd starts with daemon.metrics" wait_socket
check "it logs the endpoint" grep -q "metrics at $URL" $LOG

promoted() { [ "$(tierctl status --json | jq '.promoted_bytes')" -gt 0 ]; }
i=0
while ! promoted && [ $i -lt 120 ]; do i=$((i + 1)); sleep 1; done
check "tierd promoted some of the hot set (${i}s)" promoted
sleep 2		# a step after it, and the next render
check "wget scrapes the endpoint" wget -q -O /tmp/m $URL
tracker=$(grep '^tierd_info' /tmp/m | sed -n 's/.*tracker="\([^"]*\)".*/\1/p')
echo "# tracker: $tracker"

check "the cap of the group in tier 0" \
	test "$(sample /tmp/m 'tierd_cgroup_max_bytes{cgroup="capped",tier="0"}')" = 67108864
check "its weight" test "$(sample /tmp/m 'tierd_cgroup_weight{cgroup="capped"}')" = 50
check "one managed process in it" test "$(sample /tmp/m 'tierd_cgroup_processes{cgroup="capped"}')" = 1
used=$(sum /tmp/m 'tierd_cgroup_used_bytes{cgroup="capped",')
check "its use over the tiers covers memhog's 128 MiB ($used)" test "$used" -ge 134217728
mine=$(sum /tmp/m "tierd_process_managed_bytes{pid=\"$hog\",comm=\"memhog\",")
check "memhog by pid and name, with its managed bytes ($mine)" test "$mine" -ge 100000000
up=$(sample /tmp/m 'tierd_promoted_bytes_total{from_tier="1",to_tier="0"}')
check "promotions from tier 1 to tier 0 counted ($up)" test "${up:-0}" -gt 0
check "failed moves by reason" test "$(grep -c '^tierd_failed_moves_total{reason=' /tmp/m)" = 5
check "the tracker's CPU" grep -q '^tierd_tracker_cpu_seconds_total ' /tmp/m
check "the steps' CPU by part" test "$(grep -c '^tierd_step_cpu_seconds_total{part="\(maps\|placement_check\|node_query\|moves\)"} ' /tmp/m)" = 4
case $tracker in
damon*) check "kdamond's CPU" grep -q '^tierd_kdamond_cpu_seconds_total ' /tmp/m ;;
*) echo "ok - kdamond's CPU # SKIP tracker $tracker runs no kdamond" ;;
esac
check "the host's nodes in their tiers" \
	test "$(grep -c '^tierd_node_managed_bytes{node="[0-9]*",tier="[0-9]*"}' /tmp/m)" = 3

kill "$tierd_pid"
wait "$tierd_pid"
check "tierd exits 0" test $? = 0
check "the endpoint is closed" sh -c "! wget -q -O /dev/null $URL 2>/dev/null"
kill "$hog"
grep -i "error\|warning" $LOG | head -n 10 | sed 's/^/# log: /'
sed 's/^/scrape| /' /tmp/m
echo guest-done
