#!/bin/sh
# hint-guest.sh - runs inside the tiered guest for tests/system/hint.sh:
# tierd with the hint-fault tracker (damon+hint) on a real kernel. Prints
# TAP lines without numbers.
HOG=/usr/local/bin/memhog
WHERE=/usr/local/bin/where
RL=/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps
NB=/proc/sys/kernel/numa_balancing
DEM=/sys/kernel/mm/numa/demotion_enabled
LOG=/tmp/tierd.log

. /usr/local/bin/guest-lib.sh

count() { # RANGE NODE -> pages of $hog in RANGE on NODE
	$WHERE "$hog" "$1" | tr ' ' '\n' | sed -n "s/^node$2=//p"
}

# The kernel's own tiering on, a rate limit of the operator's.
echo 2 >$NB
echo 1000 >$RL
echo true >$DEM

# A 16 MiB hot set on node 2 (written every 10 ms), 112 MiB idle on node 1.
start_hog /tmp/hog.out --mib 128 --hot-mib 16 --hot-node 2 --cold-node 1 || exit 1
hot_pages=4096
mkdir -p /etc/tierd
# Told to leave the kernel's tiering alone, it cannot take hint faults:
# one line, and nothing changed.
printf 'processes:\n  pids: [%d]\ndaemon:\n  kernel_tiering: warn\npolicy:\n  tracker: damon+hint\n' \
	"$hog" >/etc/tierd/tierd.yaml
timeout 60 tierd --foreground 2>/tmp/warn.log </dev/null
rc=$?
sed 's/^/# warn: /' /tmp/warn.log
check "with kernel_tiering: warn it refuses to start (status $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
check "... saying why" grep -q "damon+hint needs daemon.kernel_tiering: disable" /tmp/warn.log
check "... and changed nothing" test "$(cat $NB)/$(cat $RL)/$(cat $DEM)" = 2/1000/true
printf 'processes:\n  pids: [%d]\ndaemon:\n  max_cpu_percent: 50\n  log_level: debug\npolicy:\n  tracker: damon+hint\n' \
	"$hog" >/etc/tierd/tierd.yaml
tierd --foreground 2>$LOG &
tierd_pid=$!
wait_socket || { notok "tierd answers"; sed 's/^/# /' $LOG; exit 1; }
# While it runs, the kernel's NUMA balancing takes hint faults and moves
# nothing, and the state file holds what to put back.
check "numa_balancing is 2 (memory tiering) while tierd runs" test "$(cat $NB)" = 2
check "the promotion rate limit is 0 while tierd runs" test "$(cat $RL)" = 0
check "demotion is off while tierd runs" test "$(cat $DEM)" = false
check "the state file holds the rate limit found" \
	grep -qx "numa_balancing_promote_rate_limit_MBps 1000" /run/tierd/state
check "the log says so" grep -q "takes hint faults for tierd and moves nothing" $LOG
t=0
while [ $t -lt 60 ]; do
	on0=$(count "$hot" 0)
	[ "$on0" -ge $((hot_pages * 9 / 10)) ] && break
	sleep 1
	t=$((t + 1))
done
# The kernel scans a task's pages for hint faults after each second of its
# CPU time, and memhog, asleep between its writes, is scanned seldom: where
# its ranges have not had two passes, DAMON's regions rate them (in one sid
# run, before the cover was taken per range, 3,271 of 4,096 pages came up
# and the rest stayed).
echo "# after $t s: hot on node 0: $on0 of $hot_pages"
check "the hot set came to node 0 (>= 90%) within 60 s" test "$on0" -ge $((hot_pages * 9 / 10))
# The kernel's first scan of a process comes after a delay of the
# process's own CPU time, and memhog sleeps between its writes: with the
# hot set placed by DAMON within a second, the first fault may not be read
# yet (none was, in one run of the full suite). Up to 30 s for it.
t=0
while :; do
	st=$(tierctl status --json)
	[ "$(echo "$st" | jq '.tracker_workload_faults // 0')" -ge 1 ] || [ $t -ge 30 ] && break
	sleep 1
	t=$((t + 1))
done
echo "# faults read after $t s more"
check "status names the tracker ($(echo "$st" | jq -r .tracker))" \
	test "$(echo "$st" | jq -r .tracker)" = damon+hint
check "status counts the faults seen ($(echo "$st" | jq .tracker_workload_faults))" \
	test "$(echo "$st" | jq '.tracker_workload_faults // 0')" -ge 1
check "no sample was lost ($(echo "$st" | jq .tracker_dropped))" \
	test "$(echo "$st" | jq '.tracker_dropped // 0')" -eq 0
hint_ms=$(grep -o "the hint faults' [0-9.]* ms" $LOG | tail -1)
check "the debug log gives the hint faults' part of a collect (${hint_ms:-none})" test -n "$hint_ms"
kill "$tierd_pid"
wait "$tierd_pid"
check "numa_balancing put back" test "$(cat $NB)" = 2
check "the rate limit put back" test "$(cat $RL)" = 1000
check "demotion put back" test "$(cat $DEM)" = true
check "no state file after a clean exit" test ! -e /run/tierd/state
# Killed: the next tierd --restore puts the three back.
tierd --foreground 2>$LOG.2 &
tierd_pid=$!
wait_socket
kill -9 "$tierd_pid"
wait "$tierd_pid" 2>/dev/null
check "after SIGKILL the rate limit is still 0" test "$(cat $RL)" = 0
tierd --restore 2>/dev/null
check "tierd --restore put the rate limit back" test "$(cat $RL)" = 1000
check "... and numa_balancing and demotion" test "$(cat $NB)/$(cat $DEM)" = 2/true
kill "$hog"
echo guest-done
