#!/bin/sh
# migrate-guest.sh - runs inside the tiered guest for tests/system/migrate.sh:
# memhog workloads driven by migrate_check (the address space map, the
# move_pages migrator, the memory ops, process selection). Prints TAP lines
# without numbers; the host script counts them. Ends with "guest-done".
MC=/usr/local/bin/migrate_check
HOG=/usr/local/bin/memhog

# tierd alone: the kernel's own NUMA balancing would move pages too.
echo 0 >/proc/sys/kernel/numa_balancing
[ -w /sys/kernel/mm/numa/demotion_enabled ] && echo false >/sys/kernel/mm/numa/demotion_enabled

. /usr/local/bin/guest-lib.sh

# start_hog (guest-lib.sh), its start counted as a check.
started() {
	out=$1
	shift
	start_hog "$out" "$@" && ok "memhog $* started"
}

stop_hog() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# 1. Hot set from node 2 to node 0, cold pages from node 1 to node 2.
if started /tmp/hog1 --mib 96 --hot-mib 32 --hot-node 2 --cold-node 1; then
	$MC place "$hog" "$hot" "$cold"

	# 2. Process selection while the 96 MiB workload runs.
	$MC select --label "RSS >= 64 MiB" --min-rss-mib 64 --expect "$hog"
	$MC select --label "exe memhog" --exe memhog --expect "$hog"
	$MC select --label "busybox processes are small" --exe busybox --min-rss-mib 64 --expect ""
	$MC select --label "any RSS, no kernel threads" --expect-not 2
	CG=/sys/fs/cgroup/tierd-test
	if mkdir "$CG"; then
		$MC select --label "empty cgroup" --cgroup tierd-test --expect ""
		echo "$hog" >"$CG/cgroup.procs"
		$MC select --label "cgroup joined" --cgroup tierd-test --expect "$hog"
		$MC select --label "cgroup by absolute path" --cgroup "$CG" --expect "$hog"
		echo "$hog" >/sys/fs/cgroup/cgroup.procs
		$MC select --label "cgroup left" --cgroup tierd-test --expect ""
		rmdir "$CG"
		$MC select --label "cgroup removed" --cgroup tierd-test --pid "$hog" \
			--expect "$hog" --expect-rc -2 --expect-err "cgroup tierd-test ($CG): removed"
	else
		notok "mkdir $CG"
	fi
	stop_hog "$hog"
fi

# 3. The workload exits between two batches.
if started /tmp/hog2 --mib 16 --hot-mib 16 --hot-node 1; then
	$MC exit "$hog" "$hot"
	wait "$hog" 2>/dev/null
fi

# 4. Node 0 full: a filler takes all but ~8 MiB of it, then the hot set of
# a workload on node 1 is sent to node 0 (mixed with moves to node 2).
if started /tmp/hog3 --mib 64 --hot-mib 48 --hot-node 1 --cold-node 1; then
	work=$hog work_hot=$hot work_cold=$cold
	if started /tmp/fill --fill-node 0 --leave-mib 8; then
		filler=$hog
		grep MemFree /sys/devices/system/node/node0/meminfo | sed 's/^/# /'
		$MC full "$work" "$work_hot" "$work_cold"
		stop_hog "$filler"
	fi
	stop_hog "$work"
fi
# 5. Transparent huge pages: seen, moved whole, split, then moved apart.
if started /tmp/hog4 --mib 32 --hot-mib 16 --thp; then
	grep -E 'thp_(fault_alloc|split_page)' /proc/vmstat | sed 's/^/# /'
	$MC huge "$hog" "$hot"
	grep -E 'thp_split_page ' /proc/vmstat | sed 's/^/# /'
	stop_hog "$hog"
fi
echo guest-done
