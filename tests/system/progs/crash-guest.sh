#!/bin/sh
# crash-guest.sh - runs inside the tiered guest for tests/system/crash.sh:
# tierd killed with SIGKILL while it has NUMA balancing and demotion
# switched off (and damon_stat, where the kernel runs it) and a kdamond
# running. What it changed stays changed until `tierd --restore` (the
# unit's ExecStopPost) or the next start puts it back; the kdamond stops;
# the dead daemon's socket does not block the next start. Prints TAP lines
# without numbers; ends with "guest-done".
HOG=/usr/local/bin/memhog
SOCK=/run/tierd/tierd.sock
STATE=/run/tierd/state
LOG=/tmp/tierd.log
DS=/sys/module/damon_stat/parameters/enabled
KD=/sys/kernel/mm/damon/admin/kdamonds

. /usr/local/bin/guest-lib.sh

# The kernel's own tiering on, as an unwary host has it.
echo 2 >/proc/sys/kernel/numa_balancing
echo true >/sys/kernel/mm/numa/demotion_enabled
ds_before=$(cat $DS 2>/dev/null || echo absent)
echo "# before: numa_balancing 2, demotion_enabled true, damon_stat $ds_before"

kdamonds_on() { # how many kdamonds DAMON's sysfs shows running
	n=0
	for s in $KD/*/state; do
		[ -f "$s" ] && [ "$(damon_read "$s")" = on ] && n=$((n + 1))
	done
	echo $n
}
# start_tierd: tierd in the background ($tierd_pid), up and its kdamond
# named in the state file ($kd, its thread $kpid).
start_tierd() {
	tierd --foreground 2>>$LOG &
	tierd_pid=$!
	wait_socket || return 1
	i=0
	kd=
	while [ $i -lt 300 ] && [ -z "$kd" ]; do
		kd=$(sed -n 's/^kdamond \([0-9]*\) .*/\1/p' $STATE 2>/dev/null)
		[ -z "$kd" ] && sleep 0.1
		i=$((i + 1))
	done
	kpid=$(damon_read $KD/${kd:-x}/pid)
	[ -n "$kd" ]
}
kernel_as_before() { # PREFIX: the switches as they were before tierd
	check "$1: numa_balancing back to 2" test "$(cat /proc/sys/kernel/numa_balancing)" = 2
	check "$1: demotion_enabled back to true" test "$(cat /sys/kernel/mm/numa/demotion_enabled)" = true
	check "$1: damon_stat back to $ds_before" test "$(cat $DS 2>/dev/null || echo absent)" = "$ds_before"
}

start_hog /tmp/hog.out --mib 64 --hot-mib 16 --hot-node 1 --cold-node 0 || exit 1
mkdir -p /etc/tierd
printf 'processes:\n  pids: [%d]\ndaemon:\n  interval_ms: 200\n  max_cpu_percent: 50\npolicy:\n  tracker: damon\n' \
	"$hog" >/etc/tierd/tierd.yaml

# 1. SIGKILL, then tierd --restore.
check "tierd starts with a kdamond" start_tierd
echo "# kdamond $kd, thread $kpid"
check "tierd switched numa_balancing off" test "$(cat /proc/sys/kernel/numa_balancing)" = 0
check "tierd switched demotion off" test "$(cat /sys/kernel/mm/numa/demotion_enabled)" = false
[ "$ds_before" = Y ] && check "tierd switched damon_stat off" test "$(cat $DS)" = N
kill -9 "$tierd_pid"
wait "$tierd_pid" 2>/dev/null
check "after SIGKILL: numa_balancing still off" test "$(cat /proc/sys/kernel/numa_balancing)" = 0
check "after SIGKILL: the kdamond still runs" test "$(damon_read $KD/${kd:-x}/state)" = on
check "after SIGKILL: the state file remains" test -s $STATE
check "after SIGKILL: the dead tierd's socket remains" test -S $SOCK
out=$(tierctl status 2>&1)
case "$out" in *"not running"*) ok "tierctl on the stale socket: tierd is not running" ;;
*) notok "tierctl on the stale socket: tierd is not running"; echo "# $out" ;; esac
out=$(tierd --restore 2>&1)
rc=$?
echo "$out" | sed 's/^/# tierd --restore: /'
check "tierd --restore exits 0" test "$rc" = 0
kernel_as_before "tierd --restore"
check "tierd --restore stopped the kdamond" test "$(damon_read $KD/${kd:-x}/state)" = off
check "... its thread is gone" test ! -e "/proc/${kpid:-0}"
check "... no kdamond runs" test "$(kdamonds_on)" = 0
check "tierd --restore removed the state file" test ! -e $STATE
out=$(tierd --restore 2>&1)
case "$out" in *"nothing to put back"*) ok "tierd --restore again: nothing to put back" ;;
*) notok "tierd --restore again: nothing to put back"; echo "# $out" ;; esac

# 2. SIGKILL, then simply a new start: it puts back first, binds over the
# stale socket, and its clean exit leaves everything as before.
check "tierd starts again" start_tierd
old_kpid=$kpid
kill -9 "$tierd_pid"
wait "$tierd_pid" 2>/dev/null
check "after the second SIGKILL: the stale socket is there" test -S $SOCK
: >$LOG
check "the next start is not blocked by the stale socket" start_tierd
check "... it says it put back what the dead tierd left" grep -q "did not exit cleanly; put back what it left changed" $LOG
grep "did not exit cleanly" $LOG | sed 's/^/# log: /'
check "... the dead tierd's kdamond thread is gone" test ! -e "/proc/${old_kpid:-0}"
check "... one kdamond runs: the new tierd's" test "$(kdamonds_on)" = 1
check "... and it manages again (numa_balancing off)" test "$(cat /proc/sys/kernel/numa_balancing)" = 0
kill -TERM "$tierd_pid"
wait "$tierd_pid"
check "SIGTERM: tierd exits 0" test "$?" = 0
kernel_as_before "a clean exit"
check "a clean exit: no kdamond runs" test "$(kdamonds_on)" = 0
check "a clean exit: no state file" test ! -e $STATE
check "a clean exit: no socket" test ! -e $SOCK
kill "$hog"
wait "$hog" 2>/dev/null
echo guest-done
