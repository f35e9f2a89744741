#!/bin/sh
# guest-tiering-guest.sh - runs inside the tiered guest for
# bench/guest-tiering.sh (`make bench-guest`): for each workload layout
# (bench/progs/gups.c --layout), the GUPS-like workload three times in the
# same boot: with no tiering, under the kernel's own tiering and under tierd.
# Each run sets its workload up with every tiering off, then switches the
# tiering under test on and lets the updates start (gups --go-file). Prints
# gups's raw lines between "== run LAYOUT/NAME" and "== done LAYOUT/NAME"
# markers; the host script makes the tables.
#   guest-tiering-guest.sh SECONDS SETTLE [TRACKER [MAX_CPU_PERCENT [LAYOUTS [LOG_LEVEL]]]]
# LAYOUTS: a comma-separated list (default contiguous,scattered); LOG_LEVEL:
# tierd's daemon.log_level (debug logs each step's CPU by part).
SECS=${1:-60}
SETTLE=${2:-0}
TRACKER=${3:-auto}
MAXCPU=${4:-}
LAYOUTS=${5:-contiguous,scattered}
LOGLEVEL=${6:-}
GUPS=/usr/local/bin/gups
DAMON_STAT=/sys/module/damon_stat/parameters/enabled

free_mib() {
	for n in 0 1 2; do
		printf 'node%d_free_mib=%s ' $n \
			"$(awk '/MemFree/ { print int($4 / 1024) }' /sys/devices/system/node/node$n/meminfo)"
	done
	echo
}

kernel_tiering() { # on|off
	if [ "$1" = on ]; then
		echo 2 >/proc/sys/kernel/numa_balancing
		echo true >/sys/kernel/mm/numa/demotion_enabled
	else
		echo 0 >/proc/sys/kernel/numa_balancing
		echo false >/sys/kernel/mm/numa/demotion_enabled
	fi
}

start_gups() { # LAYOUT NAME: gups set up with tiering off, waiting on /tmp/go.NAME
	kernel_tiering off
	rm -f /tmp/go.$2 /tmp/gups.$2
	echo "== run $1/$2"
	# The array (640 MiB) prefers node 1 (768 MiB) for its first touch:
	# leave it no page cache of the runs before to crowd it out.
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo "# before set-up: $(free_mib)"
	$GUPS --layout "$1" --seconds "$SECS" --settle "$SETTLE" --go-file /tmp/go.$2 \
		>/tmp/gups.$2 2>&1 &
	gups=$!
	t0=$(date +%s)
	while ! grep -q '^ready$' /tmp/gups.$2 2>/dev/null; do
		if ! kill -0 "$gups" 2>/dev/null || [ $(($(date +%s) - t0)) -gt 600 ]; then
			echo "# gups not ready after $(($(date +%s) - t0)) s: $(free_mib)"
			sed 's/^/# gups: /' /tmp/gups.$2
			dmesg | tail -20 | sed 's/^/# dmesg: /'
			return 1
		fi
		sleep 0.2
	done
	echo "# after set-up ($(($(date +%s) - t0)) s): $(free_mib)"
}

finish_gups() { # LAYOUT NAME
	wait "$gups"
	cat /tmp/gups.$2
	echo "== done $1/$2"
}

# damon_stat (on by default in Linux 7.x) runs a kdamond of its own over
# physical memory; tierd switches it off while it runs. Off for all three
# runs, so that the no-tiering and kernel runs do not pay for it.
if [ -w "$DAMON_STAT" ] && [ "$(cat "$DAMON_STAT")" = Y ]; then
	echo N >"$DAMON_STAT"
	echo "# damon_stat switched off for every run"
fi

echo "# guest CPUs: $(nproc)"

if [ "$TRACKER" != auto ] || [ -n "$MAXCPU" ] || [ -n "$LOGLEVEL" ]; then
	mkdir -p /etc/tierd
	{
		[ "$TRACKER" = auto ] || printf 'policy:\n  tracker: %s\n' "$TRACKER"
		[ -z "$MAXCPU$LOGLEVEL" ] || echo 'daemon:'
		[ -z "$MAXCPU" ] || printf '  max_cpu_percent: %s\n' "$MAXCPU"
		[ -z "$LOGLEVEL" ] || printf '  log_level: %s\n' "$LOGLEVEL"
	} >/etc/tierd/tierd.yaml
	echo "# tierd configuration: $(tr '\n' ' ' </etc/tierd/tierd.yaml)"
fi

for layout in $(echo "$LAYOUTS" | tr , ' '); do
	# (a) no tiering at all: NUMA balancing 0, demotion off, no tierd.
	start_gups "$layout" none || exit 1
	echo "# numa_balancing=$(cat /proc/sys/kernel/numa_balancing) demotion_enabled=$(cat /sys/kernel/mm/numa/demotion_enabled)"
	echo 0 >/tmp/go.none
	finish_gups "$layout" none

	# (b) the kernel's own tiering: NUMA balancing in tiering mode (2)
	# promotes on hint faults, demotion moves pages down under reclaim.
	start_gups "$layout" kernel || exit 1
	kernel_tiering on
	echo "# numa_balancing=$(cat /proc/sys/kernel/numa_balancing) demotion_enabled=$(cat /sys/kernel/mm/numa/demotion_enabled)"
	echo 0 >/tmp/go.kernel
	finish_gups "$layout" kernel

	# (c) tierd with the default configuration (no config file unless
	# TRACKER or MAX_CPU_PERCENT), started on a host whose kernel tiering
	# is on: it switches it off while it runs.
	start_gups "$layout" tierd || exit 1
	kernel_tiering on
	tierd --foreground 2>/tmp/tierd.log &
	tierd_pid=$!
	i=0
	while ! tierctl status >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 300 ] || ! kill -0 "$tierd_pid" 2>/dev/null; then
			wait "$tierd_pid"
			echo "# tierd did not start or answer (status $?)"
			sed 's/^/# tierd log: /' /tmp/tierd.log
			kill "$gups"
			exit 1
		fi
		sleep 0.1
	done
	echo "# numa_balancing=$(cat /proc/sys/kernel/numa_balancing) demotion_enabled=$(cat /sys/kernel/mm/numa/demotion_enabled) (tierd started)"
	echo "$tierd_pid" >/tmp/go.tierd
	wait "$gups"
	cat /tmp/gups.tierd
	echo "# status: $(tierctl status --json)"
	kill "$tierd_pid"
	wait "$tierd_pid"
	sed 's/^/# tierd log: /' /tmp/tierd.log | head -$([ -n "$LOGLEVEL" ] && echo 2000 || echo 40)
	echo "== done $layout/tierd"
done
