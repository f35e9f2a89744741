#!/bin/sh
# guest-ab-guest.sh - runs inside the tiered guest for bench/guest-ab.sh:
# the GUPS-like workload (bench/progs/gups.c) under each tierd build named,
# one after the other in the same boot, REPS times over the layouts, so
# that builds are compared under the same boot's costs (a write-protect
# fault's, a move's, which differ between boots). Prints one line a run:
#   RESULT rep=R layout=L bin=NAME reached90=S hot0=N rest0=N mupd=X
#          tierd_cpu=X kd_cpu=X steps=N wl_user=X at=X [followed90=F]
# (gups's end and last tick lines; reached90 -1: not within the run;
# followed90, with MOVE_AT: seconds from the hot set's move to 90% of the
# new one on node 0, -1 not within the run;
# wl_user: the updating thread's user CPU seconds by the last tick, at s).
# LOG_LEVEL: tierd's daemon.log_level ('-': the default); other than the
# default, each run's tierd log and gups's tick lines follow its RESULT line
# ('# rep=R layout=L bin=NAME log: ...', '... gups: tick ...'; debug logs
# each step's and resume's CPU and moves, and when it came).
# MOVE_AT: the second at which gups moves its hot set (gups --move-at; '-':
# it does not).
#   guest-ab-guest.sh REPS SECONDS LAYOUTS LOG_LEVEL MOVE_AT BIN...
REPS=$1
SECS=$2
LAYOUTS=$3
LOGLEVEL=$4
MOVE_AT=$5
shift 5
MOVE=
[ "$MOVE_AT" = - ] || MOVE="--move-at $MOVE_AT"
if [ "$LOGLEVEL" != - ]; then
	mkdir -p /etc/tierd
	printf 'daemon:\n  log_level: %s\n' "$LOGLEVEL" >/etc/tierd/tierd.yaml
fi
GUPS=/usr/local/bin/gups
DAMON_STAT=/sys/module/damon_stat/parameters/enabled

# Kernel tiering and damon_stat off throughout: tierd alone moves pages.
[ -w "$DAMON_STAT" ] && echo N >"$DAMON_STAT"
echo 0 >/proc/sys/kernel/numa_balancing
echo false >/sys/kernel/mm/numa/demotion_enabled

field() { # NAME LINE
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

rep=1
while [ "$rep" -le "$REPS" ]; do
	for layout in $(echo "$LAYOUTS" | tr , ' '); do
		for bin in "$@"; do
			sync
			echo 3 >/proc/sys/vm/drop_caches
			rm -f /tmp/go /tmp/gups.out
			# shellcheck disable=SC2086
			$GUPS --layout "$layout" --seconds "$SECS" --settle 0 --go-file /tmp/go $MOVE \
				>/tmp/gups.out 2>&1 &
			g=$!
			while ! grep -q '^ready$' /tmp/gups.out 2>/dev/null; do
				kill -0 "$g" 2>/dev/null || { cat /tmp/gups.out; exit 1; }
				sleep 0.2
			done
			"$bin" --foreground 2>/tmp/tierd.log &
			tp=$!
			i=0
			while ! tierctl status >/dev/null 2>&1; do
				i=$((i + 1))
				if [ $i -gt 300 ] || ! kill -0 "$tp" 2>/dev/null; then
					echo "# $bin did not start or answer"
					sed 's/^/# tierd log: /' /tmp/tierd.log
					kill "$g"
					exit 1
				fi
				sleep 0.1
			done
			echo "$tp" >/tmp/go
			wait "$g"
			steps=$(tierctl status --json | sed -n 's/.*"steps":\([0-9]*\).*/\1/p')
			kill "$tp"
			wait "$tp"
			end=$(grep '^end ' /tmp/gups.out)
			last=$(grep '^tick ' /tmp/gups.out | tail -1)
			mupd=$(grep '^tick ' /tmp/gups.out | tr ' ' '\n' | sed -n 's/^rate=//p' |
				awk '{ s += $1; n++ } END { printf "%.2f", n ? s / n / 1e6 : 0 }')
			echo "RESULT rep=$rep layout=$layout bin=$(basename "$bin")" \
				"reached90=$(field reached90 "$end") hot0=$(field hot0 "$end")" \
				"rest0=$(field rest0 "$end") mupd=$mupd" \
				"tierd_cpu=$(field tierd_cpu "$last") kd_cpu=$(field kd_cpu "$last")" \
				"steps=${steps:-0} wl_user=$(field wl_user "$last") at=$(field at "$last")" \
				${MOVE:+"followed90=$(field followed90 "$end")"}
			if [ "$LOGLEVEL" != - ]; then
				sed "s/^/# rep=$rep layout=$layout bin=$(basename "$bin") log: /" /tmp/tierd.log
				grep '^tick ' /tmp/gups.out |
					sed "s/^/# rep=$rep layout=$layout bin=$(basename "$bin") gups: /"
			fi
		done
	done
	rep=$((rep + 1))
done
