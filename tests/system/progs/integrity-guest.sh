#!/bin/sh
# integrity-guest.sh SECONDS MIN_PAGES [RESTARTS WORKERS MIB] - runs inside the tiered
# guest for tests/system/integrity.sh (short) and `make soak` (long):
# integrity_check's workers (memory of every kind whose every byte is known,
# rewritten, forked, remapped, dropped and freed as they run) for SECONDS
# while tierd moves their pages: node 0 filled to its watermark, tierd killed
# with SIGKILL and started again several times, the kernel's own tiering on
# for one of those stretches. Asserts: every byte checked at the end matches,
# no process killed, at least MIN_PAGES pages migrated (tierd's count and the
# kernel's pgmigrate_success), every start after a SIGKILL put back what the
# dead tierd left. Prints TAP lines without numbers; ends with "guest-done".
SECS=${1:-120}
MIN_PAGES=${2:-10000}
RESTARTS=${3:-4}
WORKERS=${4:-4}
MIB=${5:-24}
IC=/usr/local/bin/integrity_check
HOG=/usr/local/bin/memhog
LOG=/tmp/tierd.log
CFG=/etc/tierd/tierd.yaml

. /usr/local/bin/guest-lib.sh

vmstat() { sed -n "s/^$1 //p" /proc/vmstat; }

# The checker checks itself: a byte changed behind its back is found.
$IC --workers 1 --mib 4 --seconds 2 --corrupt 1 >/tmp/self.out 2>&1
rc=$?
if [ $rc = 1 ] && grep -q ' mismatches=1 ' /tmp/self.out && grep -q 'mismatch: pid' /tmp/self.out; then
	ok "integrity_check finds a byte changed behind its back"
else
	notok "integrity_check finds a byte changed behind its back (status $rc)"
	sed 's/^/# /' /tmp/self.out
fi

# tierd alone at first; one stretch later runs with the kernel's tiering on.
echo 0 >/proc/sys/kernel/numa_balancing
echo false >/sys/kernel/mm/numa/demotion_enabled

# Node 0 filled: the filler leaves 48 MiB, which the workers' first
# touches take down to the watermark; from then on a promotion needs a
# demotion first. (With less, tierd finds almost none of the workers'
# pages on node 0 to demote, and the filler's are not its to move.)
$HOG --fill-node 0 --leave-mib 48 --seconds 100000 >/tmp/fill.out 2>&1 &
filler=$!
wait_for /tmp/fill.out '^ready$' 900 || notok "the filler started"
echo "# $(grep '^memhog' /tmp/fill.out)"
grep MemFree /sys/devices/system/node/node0/meminfo | sed 's/^/# /'

mkdir -p /etc/tierd
config() { # KERNEL_TIERING
	cat >$CFG <<YAML
daemon:
  interval_ms: 100
  refresh_ms: 1000
  # Under QEMU's emulation a step costs tens of times what it does on
  # hardware: the test is about moving pages, so let tierd have the CPU.
  max_cpu_percent: 100
  kernel_tiering: $1
policy:
  budget_mb_per_s: 1024
processes:
  exe: integrity_check
  min_rss_mb: 1
YAML
}

moved=0 restarts=0 put_back=0 steps_ok=0
# Until tierd answers, at most 60 s by the clock: a step under emulation
# on a busy host can outlast tierctl's own wait many times over, so
# wait_socket's count of tries is no measure of time here.
answer_within() {
	until_s=$(($(date +%s) + 60))
	until tierctl status >/dev/null 2>&1; do
		[ "$(date +%s)" -ge $until_s ] && return 1
		sleep 0.2
	done
}
start_tierd() {
	tierd --foreground 2>>$LOG &
	tierd_pid=$!
	answer_within || notok "tierd answers within 60 s of start $((restarts + 1))"
}
# The pages this tierd moved (promoted + demoted) and its steps, as status
# says: $inst_moved, $inst_steps (0 when it does not answer: a step under
# emulation can outlast tierctl's wait, so two tries).
poll_status() {
	inst_moved=0 inst_steps=0
	for try in 1 2; do
		st=$(tierctl status --json 2>/dev/null) && break
	done
	[ -n "$st" ] || return
	inst_moved=$(echo "$st" | jq '(.promoted_bytes + .demoted_bytes) / 4096 | floor')
	inst_steps=$(echo "$st" | jq .steps)
}

mig0=$(vmstat pgmigrate_success)
config disable
: >$LOG
$IC --workers "$WORKERS" --mib "$MIB" --seconds "$SECS" >/tmp/ic.out 2>/tmp/ic.err &
ic=$!
wait_for /tmp/ic.out '^ready$' 300 || notok "integrity_check started"
start_tierd

# The run cut into stretches; between two, tierd is killed with SIGKILL
# and started again. Stretch 3 has the kernel's tiering on underneath.
# Two stretches more than the restarts: a start takes seconds here.
stretch=$((SECS / (RESTARTS + 2)))
[ $stretch -lt 5 ] && stretch=5
t0=$(date +%s)
n=1
while kill -0 $ic 2>/dev/null && [ $n -le $RESTARTS ]; do
	end=$((t0 + n * stretch))
	while [ "$(date +%s)" -lt $end ] && kill -0 $ic 2>/dev/null; do
		sleep 1
	done
	kill -0 $ic 2>/dev/null || break
	poll_status
	[ "$inst_steps" -gt 0 ] && steps_ok=$((steps_ok + 1))
	echo "# stretch $n: tierd moved $inst_moved pages in $inst_steps steps; pgmigrate_success +$(($(vmstat pgmigrate_success) - mig0))"
	moved=$((moved + inst_moved))
	kill -9 $tierd_pid
	wait $tierd_pid 2>/dev/null
	restarts=$((restarts + 1))
	if [ $n -eq 2 ]; then
		# Tierd told to leave the kernel's tiering be (switched on once
		# the start has put back what the dead tierd left).
		config warn
	elif [ $n -eq 3 ]; then
		kt=$(($(vmstat pgpromote_success) + $(vmstat pgdemote_kswapd) + $(vmstat pgdemote_direct) - kt0))
		echo "# kernel tiering stretch: the kernel promoted and demoted $kt pages"
		config disable
	fi
	before=$(grep -c "did not exit cleanly; put back" $LOG)
	tierd --foreground 2>>$LOG &
	tierd_pid=$!
	# The start after the SIGKILL puts back what the dead tierd left (the
	# kdamond at least) before anything else: wait for that line, not for
	# the socket (on a busy host the first answer can take a minute,
	# which the run's stretches cannot spare).
	until_s=$(($(date +%s) + 60))
	while [ "$(grep -c "did not exit cleanly; put back" $LOG)" -le "$before" ] &&
		[ "$(date +%s)" -lt $until_s ]; do
		sleep 0.2
	done
	[ "$(grep -c "did not exit cleanly; put back" $LOG)" -gt "$before" ] && put_back=$((put_back + 1))
	if [ $n -eq 2 ]; then
		# The kernel's promotion (hint faults) and demotion (reclaim) on.
		echo 2 >/proc/sys/kernel/numa_balancing
		echo true >/sys/kernel/mm/numa/demotion_enabled
		kt0=$(($(vmstat pgpromote_success) + $(vmstat pgdemote_kswapd) + $(vmstat pgdemote_direct)))
	fi
	n=$((n + 1))
done
# The last stretch: status just before the workers' end.
while kill -0 $ic 2>/dev/null && [ "$(date +%s)" -lt $((t0 + SECS - 8)) ]; do
	sleep 1
done
poll_status
wait $ic
ic_rc=$?
[ "$inst_steps" -gt 0 ] && steps_ok=$((steps_ok + 1))
echo "# last stretch: tierd moved $inst_moved pages in $inst_steps steps"
moved=$((moved + inst_moved))
mig=$(($(vmstat pgmigrate_success) - mig0))
fail=$(($(vmstat pgmigrate_fail) + 0))
kill $tierd_pid
wait $tierd_pid
tierd_rc=$?

res=$(grep '^integrity ' /tmp/ic.out)
echo "# $res"
sed 's/^/# stderr: /' /tmp/ic.err | head -n 20
mismatches=$(echo "$res" | sed -n 's/.* mismatches=\([0-9]*\).*/\1/p')
echo "# pages moved: tierd $moved, kernel pgmigrate_success $mig (pgmigrate_fail $fail); restarts $restarts; mismatches ${mismatches:-?}"
check "integrity_check ran to its end and found every byte as written (status $ic_rc)" test "$ic_rc" = 0
check "zero mismatches (${mismatches:-none reported})" test "${mismatches:-x}" = 0
case "$res" in *" killed=0 failed=0 "*) ok "no worker killed or failed" ;; *) notok "no worker killed or failed" ;; esac
case "$res" in *" failed_children=0 "*) ok "no forked child failed" ;; *) notok "no forked child failed" ;; esac
check "tierd was killed and started again $RESTARTS times ($restarts)" test "$restarts" -eq "$RESTARTS"
check "every start after a SIGKILL put back what the dead tierd left ($put_back of $restarts)" test "$put_back" -eq "$restarts"
check "every tierd stepped ($steps_ok of $((restarts + 1)))" test "$steps_ok" -eq $((restarts + 1))
check "tierd moved at least $MIN_PAGES pages ($moved)" test "$moved" -ge "$MIN_PAGES"
check "the kernel counts at least as many migrations ($mig)" test "$mig" -ge "$MIN_PAGES"
check "the filler on node 0 was not killed" kill -0 $filler
check "no process was killed for memory" sh -c '! dmesg | grep -q "Out of memory\|Killed process"'
check "tierd exits 0 on SIGTERM at the end ($tierd_rc)" test "$tierd_rc" = 0
# A tierd that did not step or did not exit cleanly: the end of its log.
if [ "$tierd_rc" != 0 ] || [ "$steps_ok" -ne $((restarts + 1)) ]; then
	tail -n 40 $LOG | sed 's/^/# log tail: /'
fi
errors=$(grep -c "error" $LOG)
check "no error storm in tierd's log ($errors error lines over $((restarts + 1)) runs)" test "$errors" -le $((restarts + 1))
grep "error" $LOG | head -n 5 | sed 's/^/# log: /'
kill $filler
wait $filler 2>/dev/null
echo 0 >/proc/sys/kernel/numa_balancing
echo guest-done
