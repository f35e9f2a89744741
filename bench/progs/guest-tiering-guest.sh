#!/bin/sh
# guest-tiering-guest.sh - runs inside the tiered guest for
# bench/guest-tiering.sh (`make bench-guest`): the GUPS-like workload
# (bench/progs/gups.c) once under the kernel's own tiering and once under
# tierd, one after the other in the same boot. Each run sets its workload up
# with every tiering off, then switches the tiering under test on and lets
# the updates start (gups --go-file). Prints gups's raw lines between
# "== run NAME" and "== done NAME" markers; the host script makes the table.
#   guest-tiering-guest.sh SECONDS SETTLE [TRACKER [MAX_CPU_PERCENT]]
SECS=${1:-60}
SETTLE=${2:-0}
TRACKER=${3:-auto}
MAXCPU=${4:-}
GUPS=/usr/local/bin/gups

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

start_gups() { # NAME: gups set up with tiering off, waiting on /tmp/go.NAME
	kernel_tiering off
	rm -f /tmp/go.$1
	echo "== run $1"
	echo "# before set-up: $(free_mib)"
	$GUPS --seconds "$SECS" --settle "$SETTLE" --go-file /tmp/go.$1 >/tmp/gups.$1 2>&1 &
	gups=$!
	i=0
	while ! grep -q '^ready$' /tmp/gups.$1 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 3000 ] && { echo "# gups not ready"; cat /tmp/gups.$1; return 1; }
		sleep 0.1
	done
	echo "# after set-up: $(free_mib)"
}

finish_gups() { # NAME
	wait "$gups"
	cat /tmp/gups.$1
}

# (a) the kernel's own tiering: NUMA balancing in tiering mode (2) promotes
# on hint faults, demotion moves pages down under reclaim.
start_gups kernel || exit 1
kernel_tiering on
echo "# numa_balancing=$(cat /proc/sys/kernel/numa_balancing) demotion_enabled=$(cat /sys/kernel/mm/numa/demotion_enabled)"
echo 0 >/tmp/go.kernel
finish_gups kernel
echo "== done kernel"

# (b) tierd with the default configuration (no config file), started on a
# host whose kernel tiering is on: it switches it off while it runs.
start_gups tierd || exit 1
kernel_tiering on
if [ "$TRACKER" != auto ] || [ -n "$MAXCPU" ]; then
	mkdir -p /etc/tierd
	{
		[ "$TRACKER" = auto ] || printf 'policy:\n  tracker: %s\n' "$TRACKER"
		[ -z "$MAXCPU" ] || printf 'daemon:\n  max_cpu_percent: %s\n' "$MAXCPU"
	} >/etc/tierd/tierd.yaml
	echo "# tierd configuration: $(tr '\n' ' ' </etc/tierd/tierd.yaml)"
fi
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
finish_gups tierd
echo "# status: $(tierctl status --json)"
kill "$tierd_pid"
wait "$tierd_pid"
sed 's/^/# tierd log: /' /tmp/tierd.log | head -40
echo "== done tierd"
