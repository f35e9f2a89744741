#!/bin/sh
# daemon-guest.sh - runs inside the tiered guest for tests/system/daemon.sh:
# tierd managing real processes on a real kernel. Prints TAP lines without
# numbers; ends with "guest-done".
HOG=/usr/local/bin/memhog
WHERE=/usr/local/bin/where
SOCK=/run/tierd/tierd.sock
LOG=/tmp/tierd.log

. /usr/local/bin/guest-lib.sh


count() { # RANGE NODE -> pages of $hog in RANGE on NODE
	$WHERE "$hog" "$1" | tr ' ' '\n' | sed -n "s/^node$2=//p"
}

# wait_hot WANT SECONDS: until at least WANT pages of the hot range $hot
# of $hog are on node 0, at most SECONDS; sets $on0 and $t (seconds taken).
wait_hot() {
	t=0
	while [ $t -lt "$2" ]; do
		on0=$(count "$hot" 0)
		[ "$on0" -ge "$1" ] && break
		sleep 1
		t=$((t + 1))
	done
}


# The kernel's own tiering is on, as an unwary host would have it.
echo 2 >/proc/sys/kernel/numa_balancing
echo true >/sys/kernel/mm/numa/demotion_enabled

# A workload: 32 MiB hot set on node 2, 160 MiB cold on node 0 (first
# touched there), then node 0 filled so promotions need demotions.
start_hog /tmp/hog.out --mib 192 --hot-mib 32 --hot-node 2 --cold-node 0 || exit 1
workload=$hog
hot_before=$(count "$hot" 0)
echo "# before: hot on node 0: $hot_before"
$HOG --fill-node 0 --leave-mib 4 >/tmp/fill.out 2>&1 &
filler=$!
i=0
while ! grep -q '^ready$' /tmp/fill.out 2>/dev/null && [ $i -lt 900 ]; do i=$((i + 1)); sleep 0.1; done
echo "# $(grep '^memhog' /tmp/fill.out)"
node0_pages() { # PID: its pages on node 0, from numa_maps
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^N0=/) { sub("N0=", "", $i); n += $i } } END { print n + 0 }' /proc/$1/numa_maps
}
cold_on0_before=$(( $(count "$cold" 0) + $(node0_pages $filler) ))
echo "# cold pages on node 0 (workload's cold part and the filler): $cold_on0_before"

mkdir -p /etc/tierd
cat >/etc/tierd/tierd.yaml <<YAML
daemon:
  interval_ms: 200
  refresh_ms: 1000
  # Under QEMU's emulation a step costs tens of times what it does on
  # hardware: let tierd use half a core so the test measures placement.
  max_cpu_percent: 50
processes:
  min_rss_mb: 64
YAML
tierd --foreground 2>$LOG &
tierd_pid=$!
check "tierd starts and answers" wait_socket
nices() { # the nice value of each of tierd's threads: "name=N ..."
	for t in /proc/$tierd_pid/task/*; do
		printf '%s=%s ' "$(cat $t/comm)" "$(sed 's/.*) //' $t/stat | cut -d' ' -f17)"
	done
}
n=$(nices)
echo "# tierd's threads: $n"
check "every thread of tierd's runs at daemon.nice's default, -10 ($n)" \
	sh -c "echo '$n' | tr ' ' '\n' | grep . | grep -qv '=-10\$' && exit 1; echo '$n' | grep -q tierd-step"
check "tierd switched the kernel's NUMA balancing off" test "$(cat /proc/sys/kernel/numa_balancing)" = 0
check "tierd switched demotion off" test "$(cat /sys/kernel/mm/numa/demotion_enabled)" = false
if grep -q "kernel tiering switched off while tierd runs (was numa_balancing=2" $LOG; then
	ok "the log says what tierd switched off"
else
	notok "the log says what tierd switched off"
fi
grep -q "tracker idle: .*CONFIG_IDLE_PAGE_TRACKING" $LOG && ok "the log explains unavailable trackers" || notok "the log explains unavailable trackers"
sed 's/^/# log: /' $LOG

# tierd brings the hot set to node 0 and pushes cold pages down.
hot_pages=$((32 * 256))
wait_hot $(((hot_pages * 9 + 9) / 10)) 90
echo "# after ${t} s: hot on node 0: $on0 of $hot_pages"
check "tierd brought >= 90% of the hot set to node 0" test $((on0 * 10)) -ge $((hot_pages * 9))
# Node 0 keeps a little free memory after the filler, so not every page of
# room comes from a demotion; most must. The hot set may come first, into
# the free memory and the headroom, which the next steps restore by
# demoting: up to 20 s more.
i=0
while :; do
	cold_on0=$(( $(count "$cold" 0) + $(node0_pages $filler) ))
	[ $((cold_on0_before - cold_on0)) -ge $((hot_pages / 2)) ] || [ $i -ge 20 ] && break
	sleep 1
	i=$((i + 1))
done
echo "# cold pages on node 0: $cold_on0_before -> $cold_on0 ($i s after the hot set)"
check "cold pages were pushed down from node 0 to make room (>= 50% of the hot set)" \
	test $((cold_on0_before - cold_on0)) -ge $((hot_pages / 2))
# The heatmap of the workload (DAMON's observations): the hot range reads
# hotter than the cold one, and sits in tier 0. Windows inside each range,
# away from the boundary a DAMON region may straddle.
heat_slices() { tierctl heatmap --json --bins 1 "$workload" 2>/dev/null | grep -c '"end_s"'; }
i=0
while [ "$(heat_slices)" -lt 3 ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.2; done
heat() { # START END FIELD: FIELD of the one bin over [START, END)
	tierctl heatmap --json --bins 1 --start "$1" --end "$2" "$workload" 2>>/tmp/heat.err |
		sed -n "s/^ *\"$3\": *\([-0-9.eE+]*\),*$/\1/p"
}
hot_lo=$(printf '0x%x' $((${hot%-*} + 2097152))) hot_hi=$(printf '0x%x' $((${hot#*-} - 2097152)))
cold_lo=$(printf '0x%x' $((${cold%-*} + 16777216))) cold_hi=${cold#*-}
# Each range's hottest slice: under QEMU's emulation the accessed bits
# DAMON reads are set again only when the emulated TLB is flushed, so the
# hot range can read idle for seconds on end (a mean over the slices went
# from 70-136 to 9 in one run of thirteen, 4 of its 6 slices blank), while
# a range that is cold reads idle in every slice.
# Read again, a second apart, up to 10 times, until it holds: a run of
# slices in which DAMON's regions straddle both ranges, or the hot range's
# slices all read idle, passes in seconds; each reading is printed.
hotter() { awk -v h="$hot_max" -v c="$cold_max" 'BEGIN { exit !(h + 0 > 1 && h + 0 > 4 * c) }'; }
i=0
while :; do
	hot_rate=$(heat "$hot_lo" "$hot_hi" mean_rate) hot_max=$(heat "$hot_lo" "$hot_hi" max_rate)
	cold_rate=$(heat "$cold_lo" "$cold_hi" mean_rate) cold_max=$(heat "$cold_lo" "$cold_hi" max_rate)
	echo "# heatmap: hot range $hot_rate (hottest slice $hot_max), cold range $cold_rate ($cold_max) accesses/s per page"
	i=$((i + 1))
	hotter || [ $i -ge 10 ] && break
	sleep 1
done
[ -s /tmp/heat.err ] && sed 's/^/# tierctl heatmap: /' /tmp/heat.err
check "tierctl heatmap: the hot range's hottest slice reads hotter than the cold range's (more than 4 times; reading $i)" hotter
if ! hotter; then
	tierctl heatmap --json --bins 8 --start "${hot%-*}" --end "${cold#*-}" "$workload" 2>&1 |
		tr -d ' \n' | sed 's/{"start"/\n&/g' | sed 's/^/# /'
	echo
fi
check "tierctl heatmap: the hot range's pages are in tier 0" test "$(heat "$hot_lo" "$hot_hi" tier)" = 0
out=$(tierctl heatmap "$workload")
printf '%s\n' "$out" | head -n 12 | sed 's/^/# /'
check "tierctl heatmap draws the workload on a terminal" test "${out#*scale, accesses/s per page}" != "$out"

st=$(tierctl status --json)
echo "# status: $st"
echo "$st" | grep -q '"promoted_bytes":[1-9]' && ok "status counts promoted bytes" || notok "status counts promoted bytes"
# What a move cost: the move calls' CPU over the pages they moved, so no
# more than the moves' CPU over the pages that changed tier, and more
# than nothing once 256 pages moved.
check "status says what a page move cost ($(echo "$st" | jq -c '[.move_page_ns, .step_cpu_seconds.moves, .promoted_bytes, .demoted_bytes]'))" \
	test "$(echo "$st" | jq '.move_page_ns > 0 and .move_page_ns <= 1.01e9 * .step_cpu_seconds.moves * 4096 / (.promoted_bytes + .demoted_bytes)')" = true
echo "$st" | grep -q '"tracker":"damon+softdirty"' && ok "tracker damon+softdirty on this kernel" ||
	notok "tracker damon+softdirty on this kernel"
echo "$st" | grep -q '"processes":[1-9]' && ok "status counts managed processes" || notok "status counts managed processes"
# Node 0 was full (the filler): moves there were refused and the log says so.
if echo "$st" | grep -q '"failed_moves":0,'; then
	ok "# SKIP no move found node 0 full this time"
else
	grep -q "found their target node full (ENOMEM)" $LOG && ok "a full target node is logged clearly" ||
		notok "a full target node is logged clearly"
fi

# The workload exits while tierd works on it: no crash, no error storm.
kill "$workload"
wait "$workload" 2>/dev/null
sleep 3
check "tierd survives the workload's exit" kill -0 "$tierd_pid"
errors=$(grep -c "error" $LOG)
check "no error storm after the exit ($errors error lines)" test "$errors" -le 3
check "status still answers" tierctl status
# A reload puts a new daemon.nice on every thread.
sed -i 's/^daemon:$/daemon:\n  nice: 0/' /etc/tierd/tierd.yaml
tierctl reload >/dev/null
n=$(nices)
check "a reload with daemon.nice 0 puts every thread at 0 ($n)" \
	sh -c "echo '$n' | tr ' ' '\n' | grep . | grep -qv '=0\$' && exit 1; echo '$n' | grep -q 'tierd='"

# SIGTERM: tierd stops and restores the kernel's tiering.
kill "$tierd_pid"
wait "$tierd_pid"
rc=$?
check "tierd exits 0 on SIGTERM" test "$rc" = 0
check "numa_balancing restored to 2" test "$(cat /proc/sys/kernel/numa_balancing)" = 2
check "demotion_enabled restored" test "$(cat /sys/kernel/mm/numa/demotion_enabled)" = true
sed 's/^/# log: /' $LOG | tail -n 6
kill "$filler" 2>/dev/null
wait "$filler" 2>/dev/null

# kernel_tiering: warn leaves the kernel alone and says so.
printf 'daemon:\n  kernel_tiering: warn\n' >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
check "kernel_tiering: warn leaves numa_balancing on" test "$(cat /proc/sys/kernel/numa_balancing)" = 2
grep -q "the kernel's own tiering is on" $LOG && ok "and warns" || notok "and warns"
kill "$tierd_pid"
wait "$tierd_pid"

# Intent: a pin-fast range stays on node 0 while hot pages compete for it;
# a range advised cold goes to the slowest node.
echo 0 >/proc/sys/kernel/numa_balancing
start_hog /tmp/hog3.out --mib 160 --hot-mib 32 --hot-node 1 --cold-node 0
pinned=$hog
pin_start=$(echo "$cold" | sed 's/-.*//')
pin_range=$(printf '0x%x-0x%x' $((pin_start)) $((pin_start + 16 * 1048576)))
cold_range=$(printf '0x%x-0x%x' $((pin_start + 16 * 1048576)) $((pin_start + 32 * 1048576)))
$HOG --fill-node 0 --leave-mib 4 >/tmp/fill2.out 2>&1 &
filler=$!
i=0
while ! grep -q '^ready$' /tmp/fill2.out 2>/dev/null && [ $i -lt 900 ]; do i=$((i + 1)); sleep 0.1; done
printf 'daemon:\n  interval_ms: 200\n  max_cpu_percent: 50\n' >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
check "tierctl hint pin-fast" tierctl hint "$pinned" "$pin_start" 16M pin-fast
check "tierctl hint cold" tierctl hint "$pinned" $((pin_start + 16 * 1048576)) 16M cold
wait_hot $(((8192 * 9 + 9) / 10)) 60
echo "# after ${t} s: hot on node 0: $on0 of 8192"
check "the hot set came to node 0 (>= 90%)" test $((on0 * 10)) -ge $((8192 * 9))
# tierd may have demoted some of the range to make headroom on the full
# node 0 before the hint arrived: pinned pages go up first, within the
# migration budget it shares with the hot set.
t=0
while [ $t -lt 20 ]; do
	pin_on0=$($WHERE "$pinned" "$pin_range" | tr ' ' '\n' | sed -n 's/^node0=//p')
	[ "$pin_on0" -eq 4096 ] && break
	sleep 1
	t=$((t + 1))
done
echo "# after ${t} s more: pinned range on node 0: $pin_on0 of 4096"
check "the pin-fast range is on node 0 with the hot set (all 4096 pages)" test "$pin_on0" -eq 4096
# The advised range shares the migration budget with the hot set: give it
# the seconds it needs rather than a fixed moment.
t=0
while [ $t -lt 30 ]; do
	cold_on2=$($WHERE "$pinned" "$cold_range" | tr ' ' '\n' | sed -n 's/^node2=//p')
	[ $((cold_on2 * 10)) -ge $((4096 * 9)) ] && break
	sleep 1
	t=$((t + 1))
done
echo "# cold-advised range on node 2 after ${t} s more: $cold_on2 of 4096"
check "the range advised cold went to the slowest node (>= 90%)" test $((cold_on2 * 10)) -ge $((4096 * 9))
pin_on0=$($WHERE "$pinned" "$pin_range" | tr ' ' '\n' | sed -n 's/^node0=//p')
check "the pin-fast range stayed on node 0 meanwhile ($pin_on0 of 4096)" test "$pin_on0" -eq 4096
kill "$tierd_pid"
wait "$tierd_pid"
kill "$filler" "$pinned" 2>/dev/null
wait "$filler" "$pinned" 2>/dev/null

# A managed cgroup removed while tierd runs: a clear log line, no crash.
# Half a core for tierd: under emulation its first step (the catalogue)
# costs seconds, and the default share would space the next far apart.
echo 0 >/proc/sys/kernel/numa_balancing
CG=/sys/fs/cgroup/tierd-db
mkdir $CG
start_hog /tmp/hog2.out --mib 96 --hot-mib 16 --hot-node 1 --cold-node 1
echo "$hog" >$CG/cgroup.procs
printf 'processes:\n  cgroups: [tierd-db]\n  min_rss_mb: 1\ndaemon:\n  max_cpu_percent: 50\n' >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
sleep 2
echo "$hog" >/sys/fs/cgroup/cgroup.procs
rmdir $CG
# The next process selection (a few steps, longer on a loaded host) says so.
i=0
while ! grep -q "tierd-db" $LOG && [ $i -lt 150 ]; do i=$((i + 1)); sleep 0.1; done
check "tierd survives its cgroup's removal" kill -0 "$tierd_pid"
grep -q "tierd-db" $LOG && ok "the log names the removed cgroup" || notok "the log names the removed cgroup"
check "one log line for it, not a storm" test "$(grep -c 'tierd-db' $LOG)" -le 2
sed 's/^/# log: /' $LOG
kill "$tierd_pid"
wait "$tierd_pid"
kill "$hog"
wait "$hog" 2>/dev/null

# Pages moved behind tierd's back: the workload moves its 240 MiB cold
# part from node 0 to node 2 itself (mbind MPOL_MF_MOVE). tierd's numa_maps
# check sees its mapping's counts differ and queries it again: status and
# explain follow within seconds, and tierd tries no move on the old
# picture.
start_hog /tmp/hog6.out --mib 256 --hot-mib 16 --hot-node 0 --cold-node 0 \
	--move-cold-after 10 --move-to 2
printf 'processes:\n  pids: [%d]\ndaemon:\n  interval_ms: 200\n  max_cpu_percent: 50\n' "$hog" >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
i=0
while ! grep -q '^moved$' /tmp/hog6.out && [ $i -lt 900 ]; do i=$((i + 1)); sleep 0.1; done
check "the workload moved its cold part to node 2 itself" grep -q '^moved$' /tmp/hog6.out
st=$(tierctl status --json)
steps0=$(echo "$st" | jq .steps)
failed0=$(echo "$st" | jq .failed_moves)
want=$((240 * 1048576 * 95 / 100))
t=0
t2=0
while [ $t -lt 60 ]; do
	st=$(tierctl status --json)
	t2=$(echo "$st" | jq '.tiers[2].managed_bytes')
	[ "$t2" -ge $want ] && break
	sleep 0.5
	t=$((t + 1))
done
steps1=$(echo "$st" | jq .steps)
echo "# moved behind tierd's back: tier 2 holds $t2 bytes after $((t / 2)) s, steps $steps0 -> $steps1, rechecked $(echo "$st" | jq .rechecked_pages) pages"
rech=$(echo "$st" | jq .rechecked_pages)
disagree=
if [ "$t2" -ge $want ]; then
	ok "status puts the moved pages on tier 2 ($t2 bytes)"
elif [ "$rech" -gt $((65536 * 2)) ]; then
	# The mapping was queried again (more than twice its pages; the
	# checks back off from a mapping that keeps differing) and numa_maps
	# still disagreed with move_pages: seen on Linux 7.2, not on 6.12.
	disagree="numa_maps and move_pages disagree on this kernel ($rech pages rechecked)"
	ok "# SKIP status has $t2 bytes on tier 2: $disagree"
else
	notok "status puts the moved pages on tier 2 ($t2 bytes)"
fi
check "found by the numa_maps check (rechecked_pages >= 58000)" test "$(echo "$st" | jq .rechecked_pages)" -ge 58000
check "no failed moves on the old picture" test "$(echo "$st" | jq .failed_moves)" -eq "$failed0"
mid=$(printf '%#x' $(( $(echo "$cold" | sed 's/-.*//') + 64 * 1048576 )))
# Read again for up to 10 s: in one sid run, status had the moved pages
# on tier 2 at once while explain, read right after, still gave these
# pages other nodes.
e=0
while :; do
	ex=$(tierctl explain --json "$hog" "$mid" 262144)
	n2=$(echo "$ex" | jq '[.pages[] | select(.node == 2)] | length')
	[ "$n2" = 64 ] || [ $e -ge 20 ] && break
	sleep 0.5
	e=$((e + 1))
done
echo "# explain: $n2 of 64 pages on node 2 after $((e / 2)) s"
if [ -n "$disagree" ] && [ "$n2" -ne 64 ]; then
	# The same picture as the status above: on this kernel it lags.
	ok "# SKIP explain puts $n2 of 64 of its pages on node 2: $disagree"
else
	check "explain puts its pages on node 2" test "$n2" -eq 64
fi
kill "$tierd_pid"
wait "$tierd_pid"
kill "$hog"
wait "$hog" 2>/dev/null

# Transparent huge pages: a 16 MiB hot set of huge pages on node 1 comes
# to node 0 in whole huge pages. Their accessed bits (DAMON) stand for 512
# pages each; without samples nothing tells their pages apart, so none is
# split.
start_hog /tmp/hog4.out --mib 64 --hot-mib 16 --hot-node 1 --cold-node 1 --thp
huge_before=$(sed -n 's/^AnonHugePages: *\([0-9]*\) kB/\1/p' /proc/$hog/smaps_rollup)
echo "# AnonHugePages before: $huge_before kB"
printf 'processes:\n  pids: [%d]\ndaemon:\n  interval_ms: 200\n  max_cpu_percent: 50\n' "$hog" >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
wait_hot 4096 60
echo "# after ${t} s: hot huge pages on node 0: $on0 of 4096"
check "the hot set of huge pages came to node 0 (all 4096 pages)" test "$on0" -eq 4096
huge_after=$(sed -n 's/^AnonHugePages: *\([0-9]*\) kB/\1/p' /proc/$hog/smaps_rollup)
echo "# AnonHugePages after: $huge_after kB"
check "they moved as huge pages ($huge_before kB before, $huge_after kB after)" \
	test "$huge_before" -ge 49152 -a "$huge_after" -eq "$huge_before"
st=$(tierctl status --json)
check "status counts the huge pages and no split" \
	test "$(echo "$st" | jq .huge_pages)" -ge 24 -a "$(echo "$st" | jq .split_huge_pages)" -eq 0
ex=$(tierctl explain "$hog" "$(echo "$hot" | sed 's/-.*//')" --json)
check "explain says the page is in a huge page" test "$(echo "$ex" | jq '.pages[0].huge_page')" = true
kill "$tierd_pid"
wait "$tierd_pid"
kill "$hog"
# The soft-dirty fallback (the tracker when DAMON is missing or held):
# a write-hot set on the slowest node comes to node 0 within seconds, and
# status counts the write-protect faults it costs the workload.
start_hog /tmp/hog5.out --mib 96 --hot-mib 16 --hot-node 2 --cold-node 0
printf 'processes:\n  pids: [%d]\ndaemon:\n  interval_ms: 200\n  max_cpu_percent: 50\n  log_level: debug\npolicy:\n  tracker: softdirty\n' "$hog" >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
wait_hot $(((4096 * 9 + 9) / 10)) 60
echo "# softdirty: after ${t} s: hot on node 0: $on0 of 4096"
check "softdirty: the write-hot set came to node 0 (>= 90%) within 20 s (${t} s)" \
	test $((on0 * 10)) -ge $((4096 * 9)) -a "$t" -le 20
i=0
while [ "$(tierctl status --json | jq '.tracker_workload_faults // 0')" -lt 4096 ] && [ $i -lt 50 ]; do
	i=$((i + 1))
	sleep 0.2
done
st=$(tierctl status --json)
echo "# status: $st"
check "softdirty: status names the tracker" test "$(echo "$st" | jq -r .tracker)" = softdirty
check "softdirty: status counts the faults it cost the workload" \
	test "$(echo "$st" | jq '.tracker_workload_faults // 0')" -ge 4096
# ... and what they cost it, as each round saw one cost its writer: 1-4
# times the calibrating child's cost a fault (tracker_fault_ns), so no
# less than a third of it and no more than 1 ms a fault (the emulator's
# slowest seen: 7 us).
check "softdirty: status says what its faults cost the workload ($(echo "$st" | jq -c '[.tracker_workload_fault_seconds, .tracker_workload_faults, .tracker_fault_ns]'))" \
	test "$(echo "$st" | jq '.tracker_workload_fault_seconds as $s | .tracker_workload_faults as $n |
		$s > 0 and $s >= $n * .tracker_fault_ns / 3e9 and $s <= $n * 1e-3')" = true
# Faults are counted when a round ends: rounds ended, nothing dropped.
check "softdirty: status counts its rounds ($(echo "$st" | jq .tracker_rounds)) and drops none" \
	test "$(echo "$st" | jq '(.tracker_rounds // 0) >= 1 and .tracker_dropped == 0')" = true
# The guest's kernels (6.12, 7.x) hand the soft-dirty runs back whole
# (PAGEMAP_SCAN, Linux 6.7): tierd finds it and reads by it.
check "softdirty: reads by PAGEMAP_SCAN ($(echo "$st" | jq .tracker_scan_reads))" \
	test "$(echo "$st" | jq '.tracker_scan_reads // 0')" -ge 3
# Its last round's reads: four, in the writer's time no later than in wall time.
check "softdirty: status dates its reads ($(echo "$st" | jq -c '[.tracker_read_ms, .tracker_read_wall_ms, .tracker_read_pages, .tracker_read_ran_ms]'))" \
	test "$(echo "$st" | jq '(.tracker_read_ms | length) == 4 and (.tracker_read_wall_ms | length) == 4 and ([.tracker_read_ms, .tracker_read_wall_ms] | transpose | all(.[0] <= .[1])) and (.tracker_read_pages | length) == 4 and (.tracker_read_pages | add) > 0 and (.tracker_read_ran_ms | length) == 4 and (.tracker_read_ran_ms | all(. >= 0))')" = true
# Its early reads wait for the writer's own time to reach 20, 60 and
# 200 ms, or the wall clock 16 times that. The wait goes by the writer's
# minor faults since the clear; the read dates itself again by the dirty
# pages it found, which may be more (a mapping grown since the clear is
# dirty whole, without faults): in one sid run 18.75 ms for a read held
# to 20. So within a tenth of the time.
check "softdirty: early reads held for the writer's time" \
	test "$(echo "$st" | jq '[range(3)] | all(. as $k | [20, 60, 200][$k] as $r | $st.tracker_read_ms[$k] >= 0.9 * $r or $st.tracker_read_wall_ms[$k] >= 16 * $r)' --argjson st "$st" -n)" = true
# Debian's kernels have per-thread scheduler statistics: the writer's
# time is its runs and waits, not the CPU clock or the wall clock.
check "softdirty: dates writes by schedstat ($(echo "$st" | jq -c .tracker_writer_time))" \
	test "$(echo "$st" | jq -r .tracker_writer_time)" = schedstat
# The debug log's collect lines: the picture's population fits made, and
# collects that handed over the last rates again (nothing read or moved
# since) - or, mostly, steps not taken for want of news (status
# steps_without_news): with the hot set placed, most looks find nothing
# new, and a collect rates a picture again only when a step is taken
# without news (2 s after the last).
fits=$(grep -o 'soft-dirty fits so far: [0-9]* made, [0-9]* taken again; pictures rated as at the last collect: [0-9]*' $LOG | tail -1)
echo "# softdirty: $fits"
quiet=$(echo "$st" | jq '.steps_without_news // 0')
check "softdirty: the debug log counts fits made and pictures rated again (${fits:-no collect line}), or steps not taken for want of news ($quiet)" \
	test "$(echo "$fits" | awk -v q="$quiet" '{ print ($5 >= 1 && ($NF >= 1 || q >= 1)) }')" = 1
kill "$tierd_pid"
wait "$tierd_pid"
kill "$hog"
wait "$hog" 2>/dev/null

# The other fallbacks cannot run in this guest (no idle page tracking in
# Debian's kernels, no PMU with memory samples under QEMU): forced by the
# configuration, tierd refuses to start with one line that says why.
echo 2 >/proc/sys/kernel/numa_balancing
for trk in idle perf; do
	printf 'policy:\n  tracker: %s\n' "$trk" >/etc/tierd/tierd.yaml
	tierd --foreground >/tmp/refused.out 2>&1
	rc=$?
	sed 's/^/# refused: /' /tmp/refused.out
	check "policy.tracker: $trk is refused at start with one clear line (status $rc)" \
		sh -c "test $rc -ne 0 && test \$(wc -l </tmp/refused.out) -eq 1 && grep -q 'policy.tracker: $trk cannot run here: ' /tmp/refused.out"
done
check "... and leaves the kernel's settings as they were" test "$(cat /proc/sys/kernel/numa_balancing)" = 2

# tierd killed: what it changed stays changed until the next start or
# tierd --restore (the unit's ExecStopPost) puts it back, its kdamond
# included. The kdamond's CPU shows in status beside tierd's.
echo 2 >/proc/sys/kernel/numa_balancing
ds=/sys/module/damon_stat/parameters/enabled
ds_before=$(cat $ds 2>/dev/null || echo absent)
start_hog /tmp/hog6.out --mib 64 --hot-mib 16 --hot-node 1 --cold-node 0
echo "# before the start: numa_balancing=$(cat /proc/sys/kernel/numa_balancing), damon_stat $ds_before"
printf 'processes:\n  pids: [%d]\ndaemon:\n  interval_ms: 200\n  max_cpu_percent: 50\n' "$hog" >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
i=0
while [ $i -lt 100 ]; do
	kcpu=$(tierctl status --json | jq '.kdamond_cpu_seconds // -1')
	awk -v c="$kcpu" 'BEGIN { exit !(c > 0) }' && break
	i=$((i + 1))
	sleep 0.2
done
st=$(tierctl status --json)
echo "# status: cpu_seconds $(echo "$st" | jq .cpu_seconds), kdamond_cpu_seconds $kcpu, system_cpu_seconds $(echo "$st" | jq .system_cpu_seconds)"
check "status reports the kdamond's CPU ($kcpu s) and the sum with tierd's" \
	awk -v c="$kcpu" -v s="$(echo "$st" | jq .system_cpu_seconds)" -v o="$(echo "$st" | jq .cpu_seconds)" \
	'BEGIN { exit !(c > 0 && s >= c + o - 0.01) }'
echo "# status: step_cpu_seconds $(echo "$st" | jq -c .step_cpu_seconds)"
check "status splits the steps' CPU into parts that add up to it, within tierd's" \
	test "$(echo "$st" | jq '.step_cpu_seconds as $s | ($s.tracker + $s.maps + $s.placement_check +
		$s.node_query + $s.moves + $s.policy) as $sum |
		$s.total > 0 and ($sum - $s.total | fabs) < 0.001 and $s.total <= .cpu_seconds + 0.001')" = true
tc=$(echo "$st" | jq -c '.thread_cpu_seconds')
check "status gives tierd's CPU by thread, the step's and soft-dirty's apart, within tierd's ($tc)" \
	test "$(echo "$st" | jq '.thread_cpu_seconds as $t | ($t["tierd-step"] | type) == "number" and
		($t["tierd-softdirty"] | type) == "number" and ([$t[]] | add) <= .cpu_seconds + 0.05')" = true
ri=$(echo "$st" | jq '.refresh_interval_ms // -1')
check "status says how often the processes are re-read ($ri ms: refresh_ms, 1000 by default, up to 30 s)" \
	awk -v r="$ri" 'BEGIN { exit !(r >= 1000 && r <= 30000) }'
if [ "$ds_before" = Y ]; then
	check "damon_stat is off while tierd uses DAMON" test "$(cat $ds)" = N
	grep -q "damon_stat switched off while tierd runs" $LOG && ok "the log says so" ||
		notok "the log says so"
fi
kd=$(cat /run/tierd/state | sed -n 's/^kdamond \([0-9]*\) .*/\1/p')
# A reload that lowers daemon.max_cpu_percent gives the tracker new
# parts: the kdamond's (a third of 50%, then of 5%) shows in its sample
# interval, which its share checks (every 3 s) lengthen toward ten times.
si=/sys/kernel/mm/damon/admin/kdamonds/${kd:-0}/contexts/0/monitoring_attrs/intervals/sample_us
s0=$(damon_read "$si")
want=$((${s0:-1} * 3))
[ $want -gt 100000 ] && want=100000	# the longest samples the share asks for
printf 'processes:\n  pids: [%d]\ndaemon:\n  interval_ms: 200\n  max_cpu_percent: 5\n' "$hog" >/etc/tierd/tierd.yaml
tierctl reload >/dev/null
i=0
while [ $i -lt 20 ]; do
	sleep 1
	s1=$(damon_read "$si")
	[ "${s1:-0}" -ge $want ] && [ "${s1:-0}" -gt "${s0:-0}" ] && break
	i=$((i + 1))
done
echo "# kdamond $kd sample_us: $s0 before the reload to 5%, $s1 after $i s; status step_cpu_percent $(tierctl status --json | jq .step_cpu_percent)"
check "a reload to max_cpu_percent 5 lengthens the kdamond's samples ($s0 -> $s1 us)" \
	sh -c "test ${s1:-0} -ge $want && test ${s1:-0} -gt ${s0:-0}"
kill -9 "$tierd_pid"
wait "$tierd_pid" 2>/dev/null
check "after SIGKILL the state file names tierd's kdamond" test -n "$kd"
check "... which still runs" test "$(damon_read /sys/kernel/mm/damon/admin/kdamonds/${kd:-0}/state)" = on
check "... and numa_balancing is still off" test "$(cat /proc/sys/kernel/numa_balancing)" = 0
out=$(tierd --restore 2>&1)
echo "# tierd --restore: $out"
check "tierd --restore stopped the kdamond" test "$(damon_read /sys/kernel/mm/damon/admin/kdamonds/${kd:-0}/state)" = off
check "tierd --restore put numa_balancing back to 2" test "$(cat /proc/sys/kernel/numa_balancing)" = 2
check "tierd --restore put damon_stat back ($ds_before)" test "$(cat $ds 2>/dev/null || echo absent)" = "$ds_before"
check "tierd --restore removed the state file" test ! -e /run/tierd/state
check "tierd --restore again: nothing to do" tierd --restore
# Killed again, then simply started again: the start puts things back first.
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
sleep 1
kill -9 "$tierd_pid"
wait "$tierd_pid" 2>/dev/null
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket
grep -q "did not exit cleanly; put back what it left changed" $LOG && ok "a start after SIGKILL puts back what the dead tierd left" ||
	notok "a start after SIGKILL puts back what the dead tierd left"
grep "did not exit cleanly" $LOG | sed 's/^/# log: /'
check "a second tierd is refused while one runs" sh -c '! tierd --foreground --socket /tmp/t2.sock 2>/tmp/t2.log && grep -q "another tierd" /tmp/t2.log'
sed 's/^/# second tierd: /' /tmp/t2.log | head -n 5
kill "$tierd_pid"
wait "$tierd_pid"
check "then a clean exit: numa_balancing 2" test "$(cat /proc/sys/kernel/numa_balancing)" = 2
check "then a clean exit: damon_stat $ds_before" test "$(cat $ds 2>/dev/null || echo absent)" = "$ds_before"
check "then a clean exit: no state file" test ! -e /run/tierd/state
kill "$hog"
wait "$hog" 2>/dev/null
echo guest-done
