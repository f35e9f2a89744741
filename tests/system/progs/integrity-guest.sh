#!/bin/sh
# integrity-guest.sh SECONDS MIN_PAGES [WORKERS MIB] - runs inside the tiered
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
WORKERS=${3:-4}
MIB=${4:-24}
IC=/usr/local/bin/integrity_check
HOG=/usr/local/bin/memhog
LOG=/tmp/tierd.log
CFG=/etc/tierd/tierd.yaml

. /usr/local/bin/guest-lib.sh

vmstat() { sed -n "s/^$1 //p" /proc/vmstat; }
status_field() { # FIELD: from tierctl status --json, 0 when it does not answer
	v=$(tierctl status --json 2>/dev/null | jq ".$1 // 0" 2>/dev/null)
	echo "${v:-0}"
}

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

# Node 0 filled to its watermark: a promotion needs a demotion first.
$HOG --fill-node 0 --leave-mib 12 --seconds 100000 >/tmp/fill.out 2>&1 &
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

moved=0 restarts=0 put_back=0 inst_moved=0 steps_ok=0
start_tierd() {
	tierd --foreground 2>>$LOG &
	tierd_pid=$!
	wait_socket || notok "tierd answers after start $((restarts + 1))"
	inst_moved=0
}
# Pages this tierd moved so far (promoted + demoted), as status says.
poll_moved() {
	st=$(tierctl status --json 2>/dev/null) || return
	m=$(echo "$st" | jq '(.promoted_bytes + .demoted_bytes) / 4096 | floor')
	[ -n "$m" ] && inst_moved=$m
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
STRETCHES=6
# One stretch more than the restarts: the last ends with the run.
stretch=$((SECS / (STRETCHES + 1)))
[ $stretch -lt 5 ] && stretch=5
t0=$(date +%s)
n=1
while kill -0 $ic 2>/dev/null && [ $n -lt $STRETCHES ]; do
	end=$((t0 + n * stretch))
	while [ "$(date +%s)" -lt $end ] && kill -0 $ic 2>/dev/null; do
		poll_moved
		sleep 2
	done
	kill -0 $ic 2>/dev/null || break
	poll_moved
	s=$(status_field steps)
	[ "$s" -gt 0 ] && steps_ok=$((steps_ok + 1))
	echo "# stretch $n: tierd moved $inst_moved pages in $s steps; pgmigrate_success +$(($(vmstat pgmigrate_success) - mig0))"
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
	start_tierd
	# The start after the SIGKILL puts back what the dead tierd left (the
	# kdamond at least) before it begins.
	[ "$(grep -c "did not exit cleanly; put back" $LOG)" -gt "$before" ] && put_back=$((put_back + 1))
	if [ $n -eq 2 ]; then
		# The kernel's promotion (hint faults) and demotion (reclaim) on.
		echo 2 >/proc/sys/kernel/numa_balancing
		echo true >/sys/kernel/mm/numa/demotion_enabled
		kt0=$(($(vmstat pgpromote_success) + $(vmstat pgdemote_kswapd) + $(vmstat pgdemote_direct)))
	fi
	n=$((n + 1))
done
while kill -0 $ic 2>/dev/null; do
	poll_moved
	sleep 2
done
wait $ic
ic_rc=$?
poll_moved
moved=$((moved + inst_moved))
s=$(status_field steps)
[ "$s" -gt 0 ] && steps_ok=$((steps_ok + 1))
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
case "$res" in *" failed_children=0") ok "no forked child failed" ;; *) notok "no forked child failed" ;; esac
check "tierd was killed and started again $((STRETCHES - 1)) times ($restarts)" test "$restarts" -eq $((STRETCHES - 1))
check "every start after a SIGKILL put back what the dead tierd left ($put_back of $restarts)" test "$put_back" -eq "$restarts"
check "every tierd stepped ($steps_ok of $((restarts + 1)))" test "$steps_ok" -eq $((restarts + 1))
check "tierd moved at least $MIN_PAGES pages ($moved)" test "$moved" -ge "$MIN_PAGES"
check "the kernel counts at least as many migrations ($mig)" test "$mig" -ge "$MIN_PAGES"
check "the filler on node 0 was not killed" kill -0 $filler
check "no process was killed for memory" sh -c '! dmesg | grep -q "Out of memory\|Killed process"'
check "tierd exits 0 on SIGTERM at the end ($tierd_rc)" test "$tierd_rc" = 0
errors=$(grep -c "error" $LOG)
check "no error storm in tierd's log ($errors error lines over $((restarts + 1)) runs)" test "$errors" -le $((restarts + 1))
grep "error" $LOG | head -n 5 | sed 's/^/# log: /'
kill $filler
wait $filler 2>/dev/null
echo 0 >/proc/sys/kernel/numa_balancing
echo guest-done
