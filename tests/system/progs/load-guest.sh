#!/bin/sh
# load-guest.sh PROCS CLIENTS SECONDS [TRACKER] - runs inside the tiered guest for
# tests/system/load.sh (short) and `make load` (long): tierd managing PROCS
# small processes (load_check procs) while CLIENTS concurrent control
# clients (load_check clients: slow readers, half-written, oversized and
# malformed requests among them) talk to it for SECONDS. Asserts: every
# client gets whole answers or a clean close, the policy keeps stepping
# (at least half its CPU share),
# tierd's memory stays bounded (printed), the log holds no error storm.
# TRACKER (policy.tracker, default softdirty): with DAMON, 1000 targets in
# one context with a target-filtered scheme each kept the guest's kdamond
# in a soft lockup for minutes (kernel 6.12, TCG) and tierd never
# answered; `make load LOAD_TRACKER=damon` shows it.
# Prints TAP lines without numbers; ends with "guest-done".
PROCS=${1:-1000}
CLIENTS=${2:-100}
SECS=${3:-20}
TRACKER=${4:-softdirty}
LC=/usr/local/bin/load_check
SOCK=/run/tierd/tierd.sock
LOG=/tmp/tierd.log

. /usr/local/bin/guest-lib.sh

echo 0 >/proc/sys/kernel/numa_balancing
echo false >/sys/kernel/mm/numa/demotion_enabled

status() { # FIELD: tierctl status gives up after 5 s, a step at 1000
	# processes under emulation on a busy host can take longer: 60 s of tries.
	until_s=$(($(date +%s) + 60))
	until st=$(tierctl status --json 2>/dev/null); do
		[ "$(date +%s)" -ge $until_s ] && break
	done
	echo "$st" | jq ".$1 // 0" 2>/dev/null || echo 0
}
threads() { # tierd's threads' CPU in clock ticks: "name=ticks ..."
	for t in /proc/$tierd_pid/task/*; do
		printf '%s=%s ' "$(cat $t/comm)" \
			"$(awk '{ print $14 + $15 }' $t/stat 2>/dev/null)"
	done
}
mem() { # FIELD: of tierd's /proc/PID/status, in kB
	sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" /proc/$tierd_pid/status
}

$LC procs "$PROCS" --kib 128 --seconds $((SECS + 600)) >/tmp/procs.out 2>&1 &
procs=$!
wait_for /tmp/procs.out '^ready$' 1200 || notok "load_check started $PROCS processes"
echo "# $(grep '^load_check' /tmp/procs.out)"

mkdir -p /etc/tierd
cat >/etc/tierd/tierd.yaml <<YAML
daemon:
  interval_ms: 100
  refresh_ms: 1000
  max_cpu_percent: 50
policy:
  tracker: $TRACKER
processes:
  exe: load_check
  min_rss_mb: 0
YAML
tierd --foreground 2>$LOG &
tierd_pid=$!
# Until tierd answers, at most 120 s by the clock (wait_socket counts
# tries, and one try can take tierctl's whole wait here).
answer_within() {
	until_s=$(($(date +%s) + $1))
	until tierctl status >/dev/null 2>&1; do
		[ "$(date +%s)" -ge $until_s ] && return 1
		sleep 0.2
	done
}
check "tierd starts and answers" answer_within 120
i=0
while [ "$(status processes)" -lt "$PROCS" ] && [ $i -lt 120 ]; do
	i=$((i + 1))
	sleep 1
done
managed=$(status processes)
echo "# managed after $i s: $managed processes, $(status managed_bytes) bytes; tierd VmRSS $(mem VmRSS) kB, VmHWM $(mem VmHWM) kB"
check "tierd manages the $PROCS processes ($managed)" test "$managed" -ge "$PROCS"
figures() { # "steps step-CPU-seconds uptime-seconds step_cpu_percent steps_without_news"
	tierctl status --json 2>/dev/null |
		jq -r '"\(.steps) \(.step_cpu_seconds.total) \(.uptime_seconds) \(.step_cpu_percent) \(.steps_without_news)"'
}
echo "# tierd's threads' CPU (ticks) before the clients: $(threads)"
f0=$(figures)
hwm_idle=$(mem VmHWM)
lines0=$(wc -l <$LOG)

# tierd's memory over the clients' run, every 2 s.
(
	while kill -0 $tierd_pid 2>/dev/null; do
		echo "$(mem VmRSS) $(mem VmHWM)"
		sleep 2
	done
) >/tmp/mem.log 2>/dev/null &
sampler=$!

$LC clients "$CLIENTS" --socket $SOCK --seconds "$SECS" >/tmp/clients.out 2>/tmp/clients.err
rc=$?
echo "# $(cat /tmp/clients.out)"
sed 's/^/# /' /tmp/clients.err | head -n 10
check "every client got whole answers or a clean close (status $rc)" test "$rc" = 0
check "tierd survived the clients" kill -0 $tierd_pid
check "status answers after them" tierctl status
f1=$(figures)
echo "# tierd's threads' CPU (ticks) after the clients: $(threads)"
# The policy kept stepping: its steps took at least half their CPU share
# (status step_cpu_percent) over the clients' run, or, where the tracker
# had nothing new for some of its steps (status steps_without_news grew:
# the step thread was there to skip them), it took a step every 4 s at
# least (without news it steps every 2 s). The steps' number says
# little on its own: at 1000 processes a step's cost is mostly reading
# their address spaces, which the clients' load makes dearer.
set -- $f0 $f1
echo "# steps: $1 before the clients, $6 after (and $5 -> ${10} not taken for want of news); their CPU $2 -> $7 s over $3 -> $8 s of uptime, share $9% of a core"
kept=$(awk -v c0="$2" -v c1="$7" -v t0="$3" -v t1="$8" -v p="$9" -v s0="$1" -v s1="$6" \
	-v q0="$5" -v q1="${10}" \
	'BEGIN { print (c1 - c0 >= (t1 - t0) * p / 100 / 2 ||
			(q1 > q0 && (s1 - s0) * 4 >= t1 - t0)) ? "yes" : "no" }')
check "the policy kept stepping under the clients ($(($6 - $1)) steps and $((${10} - $5)) without news, $(awk -v a="$2" -v b="$7" 'BEGIN { printf "%.1f", b - a }') s of CPU at a $9% share)" \
	test "$kept" = yes -a "$6" -gt "$(($1 + 1))"
kill $sampler 2>/dev/null
wait $sampler 2>/dev/null
hwm=$(mem VmHWM)
rss=$(mem VmRSS)
max_rss=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }' /tmp/mem.log)
echo "# tierd memory at $managed processes: VmHWM $hwm_idle kB before the clients, $hwm kB after; VmRSS now $rss kB, at most $max_rss kB sampled; metadata_bytes $(status metadata_bytes), heatmap_bytes $(status heatmap_bytes)"
# The bound: what 1000 processes cost (measured on 6.12 under TCG with
# soft-dirty: 72 MB of heatmaps, 26 MB of policy metadata, VmHWM 117 MB)
# with room, and 256 client slots of 64 KiB each.
check "tierd's memory stays bounded (VmHWM $hwm kB <= 256 MiB)" test "$hwm" -le 262144
check "its memory did not grow with the clients by more than their buffers (+$((hwm - hwm_idle)) kB <= 16 MiB)" \
	test $((hwm - hwm_idle)) -le 16384
lines=$(($(wc -l <$LOG) - lines0))
errors=$(grep -c "error" $LOG)
echo "# log: $lines lines during the clients' run, $errors error lines in all"
sed 's/^/# log: /' $LOG | tail -n 8
check "no log storm ($lines lines)" test "$lines" -le 20
check "no error lines ($errors)" test "$errors" = 0
kill $tierd_pid
wait $tierd_pid
check "tierd exits 0 on SIGTERM" test $? = 0
kill $procs
wait $procs
check "every managed process lived to the end" grep -q "ended_badly=0" /tmp/procs.out
echo guest-done
