#!/bin/bash
# bench/guest-tiering.sh - `make bench-guest`: the GUPS-like workload
# (bench/progs/gups.c: 640 MiB array starting on node 1 whose first 96 MiB,
# the hot set, take 90% of the random updates, plus 600 MiB of cold memory
# first touched on node 0) in the three-tier QEMU guest, once under the
# kernel's own tiering (numa_balancing=2, demotion_enabled=true) and once
# under tierd (`tierd --foreground`, default configuration: it switches the
# kernel's tiering off itself), one run each in the same boot
# (bench/progs/guest-tiering-guest.sh). Prints both side by side, one line
# per second, and writes bench/results/guest-tiering.txt.
#
#   bench/guest-tiering.sh [--kernel SUITE] [SECONDS [SETTLE [TRACKER [MAX_CPU_PERCENT]]]]
# --kernel: the guest kernel (scripts/tiered-vm --kernel: a Debian suite such
# as sid, or a bzImage path; default the test bed's, Linux 6.12); any other
# kernel writes bench/results/guest-tiering[-TRACKER-cpuPERCENT]-SUITE.txt.
# SECONDS: ticks per run (default 60); SETTLE: stop a run that many seconds
# after its hot set reached 90% on node 0 (default 0: never early);
# TRACKER: tierd's policy.tracker, MAX_CPU_PERCENT its daemon.max_cpu_percent
# (default auto and 5: the default configuration; others write
# bench/results/guest-tiering-TRACKER-cpuPERCENT.txt).
# TIERD_BUILD (default build/) names the build directory.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
KERNEL=
case ${1:-} in
--kernel) [ $# -ge 2 ] || { echo "bench-guest: --kernel needs a suite or a bzImage" >&2; exit 2; }
	KERNEL=$2; shift 2 ;;
--kernel=*) KERNEL=${1#--kernel=}; shift ;;
esac
SECS=${1:-60}
SETTLE=${2:-0}
TRACKER=${3:-auto}
MAXCPU=${4:-}
TOPO="100:20G:768 250:8G:768 500:2G:768"
OUT=$ROOT/bench/results/guest-tiering.txt
[ "$TRACKER" = auto ] && [ -z "$MAXCPU" ] ||
	OUT=$ROOT/bench/results/guest-tiering-$TRACKER-cpu${MAXCPU:-5}.txt
[ -z "$KERNEL" ] || OUT=${OUT%.txt}-$(basename "$KERNEL").txt
VM_KERNEL=()
[ -z "$KERNEL" ] || VM_KERNEL=(--kernel "$KERNEL")
export TIERED_VM_BUILD_DIR=$B

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "bench-guest: qemu-system-x86_64 is not installed (scripts/install-deps)" >&2
	exit 1
fi
for f in gups tierd tierctl; do
	[ -x "$B/$f" ] || { echo "bench-guest: $B/$f missing (make)" >&2; exit 1; }
done
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
start=$(date +%s)
"$ROOT/scripts/tiered-vm" "${VM_KERNEL[@]}" --timeout $((SECS * 6 + 200)) --topology "$TOPO" \
	--files "$B/gups $ROOT/bench/progs/guest-tiering-guest.sh" \
	-- guest-tiering-guest.sh "$SECS" "$SETTLE" "$TRACKER" "$MAXCPU" >"$raw" || {
	rc=$?
	cat "$raw"
	echo "bench-guest: the guest run failed (status $rc); nothing written" >&2
	exit 1
}
wall=$(($(date +%s) - start))
mkdir -p "$(dirname "$OUT")"
{
	echo "# command: make bench-guest (bench/guest-tiering.sh $SECS $SETTLE $TRACKER $MAXCPU), $(date -u +%Y-%m-%dT%H:%M:%SZ), ${wall} s wall"
	echo "# tree: $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "# guest: scripts/tiered-vm ${VM_KERNEL[*]} --topology \"$TOPO\" (QEMU TCG, 2 vCPUs on one host thread), $(uname -m) host"
	echo "# workload: gups, 640 MiB array bound to node 1 for its first touch then unbound, first 96 MiB = hot set"
	echo "#   with 90% of the random 8-byte updates, the other 10% uniform over the other 544 MiB; plus 600 MiB"
	echo "#   of cold memory first touched on node 0 (preferred) and never touched again"
	echo "# kernel: numa_balancing=2, demotion_enabled=true; tierd: tierd --foreground, default config (it switched"
	echo "#   kernel tiering off); one run each, same boot, kernel first"
	echo "# per tick (nominally 1 s; 'at' = seconds since the workload started its updates):"
	echo "#   hot%   share of the 24576 hot pages on node 0 (move_pages status of every hot page)"
	echo "#   acc%   share of updates served by node 0, ESTIMATED: 0.9 x hot% + 0.1 x share of the other"
	echo "#          544 MiB of the array on node 0 (every 16th page queried)"
	echo "#   MiB    migrated in that tick: kernel = delta of /proc/vmstat numa_pages_migrated (includes"
	echo "#          pgpromote_success) + pgdemote_* x 4096; tierd = delta of promoted_bytes + demoted_bytes"
	echo "#          (tierctl status --json, polled every 0.2 s; '*' = tierd, busy in its steps, did not answer"
	echo "#          since the previous tick: last figure)"
	echo "#   mig    tierd run: delta of /proc/vmstat pgmigrate_success x 4096 in MiB; with kernel tiering off"
	echo "#          these are tierd's move_pages (the figure to read when the status is starved)"
	echo "#   time-to-90%-hot: 'at' of the first tick with >= 90% of the hot set on node 0"
	echo "#   cpu_s  tierd's CPU seconds (user+sys, = status cpu_seconds) since the workload started,"
	echo "#          read from /proc/PID/stat because the socket does not answer during a step"
	echo "#   Mupd/s the workload's update rate since the previous tick (millions/s)"
	awk '/^== run / { run = $3 } /^# / { sub(/^# /, "# guest " run ": "); print }' "$raw"
	awk '
	/^== run / { run = $3 }
	/^tick / {
		delete f
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		t = f["t"] + 0
		hot = f["hot0"] / f["hot"]; rest = f["restn"] ? f["rest0"] / f["restn"] : 0
		acc = 0.9 * hot + 0.1 * rest
		if (run == "kernel") {
			moved = f["vm_moved"] * 4096 / 1048576
		} else {
			star = (f["tierd_moved"] ~ /\*$/) ? "*" : ""
			m = f["tierd_moved"]; sub(/\*$/, "", m)
			moved = m / 1048576
			cpu[t] = f["tierd_cpu"]
			mstar[t] = star
			mig = f["vm_migrated"] * 4096 / 1048576
			mgd[t] = mig - prevmig; prevmig = mig
			kvm = f["vm_moved"]
		}
		line_at[run, t] = f["at"]; hp[run, t] = hot * 100; ap[run, t] = acc * 100
		mv[run, t] = moved - prev[run]; prev[run] = moved
		rate[run, t] = f["rate"] / 1e6
		if (t > nt) nt = t
		last[run] = t
		if (!(run in r90) && hot >= 0.9) r90[run] = f["at"] + 0
		nr[run]++; sumrate[run] += f["rate"]; if (!(run in minrate) || f["rate"] < minrate[run]) minrate[run] = f["rate"]
	}
	/^end / {
		delete f
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		endl[run] = sprintf("hot set on node 0: %d of %d pages (%.1f%%); other 544 MiB of the array on node 0: %d of %d pages (%.1f%%); 600 MiB cold memory still on node 0: %d of %d pages (%.1f%%)",
			f["hot0"], f["hot"], 100 * f["hot0"] / f["hot"], f["rest0"], f["rest"], 100 * f["rest0"] / f["rest"],
			f["cold0"], f["cold"], 100 * f["cold0"] / f["cold"])
		rest0[run] = f["rest0"]; restall[run] = f["rest"]
	}
	/^# status: / { status = substr($0, 11) }
	END {
		printf "%4s | %-37s | %s\n", "", "kernel tiering", "tierd"
		printf "%4s | %6s %6s %6s %8s %7s | %6s %6s %6s %8s %7s %7s %7s\n", "t", "at", "hot%", "acc%", "MiB", "Mupd/s", "at", "hot%", "acc%", "MiB", "mig", "cpu_s", "Mupd/s"
		for (t = 1; t <= nt; t++) {
			k = (("kernel", t) in hp); d = (("tierd", t) in hp)
			ks = k ? sprintf("%6.1f %6.1f %6.1f %8.1f %7.2f", line_at["kernel", t], hp["kernel", t], ap["kernel", t], mv["kernel", t], rate["kernel", t]) : sprintf("%6s %6s %6s %8s %7s", "-", "-", "-", "-", "-")
			ds = d ? sprintf("%6.1f %6.1f %6.1f %7.1f%1s %7.1f %7.2f %7.2f", line_at["tierd", t], hp["tierd", t], ap["tierd", t], mv["tierd", t], mstar[t], mgd[t], cpu[t], rate["tierd", t]) : sprintf("%6s %6s %6s %8s %7s %7s %7s", "-", "-", "-", "-", "-", "-", "-")
			printf "%4d | %s | %s\n", t, ks, ds
		}
		for (r = 1; r <= 2; r++) {
			run = r == 1 ? "kernel" : "tierd"
			printf "# %s end: %s\n", run, endl[run]
			printf "# %s update rate: mean %.2f M/s, lowest tick %.2f M/s\n", run, sumrate[run] / nr[run] / 1e6, minrate[run] / 1e6
		}
		dur = line_at["tierd", last["tierd"]]
		printf "# tierd CPU: %.2f s over %.1f s = %.1f%% of one core (TCG)\n", cpu[last["tierd"]], dur, (dur > 0 ? 100 * cpu[last["tierd"]] / dur : 0)
		printf "# kernel tiering moves during the tierd run (vmstat, pages): %d\n", kvm
		printf "# cold pages promoted (pages of the 544 MiB outside the hot set on node 0 at the end): kernel=%d tierd=%d\n", rest0["kernel"], rest0["tierd"]
		if (status != "") printf "# tierd status at the end: %s\n", status
		kx = ("kernel" in r90) ? r90["kernel"] : -1; tx = ("tierd" in r90) ? r90["tierd"] : -1
		kend = line_at["kernel", last["kernel"]]; tend = line_at["tierd", last["tierd"]]
		ks = kx >= 0 ? sprintf("%.1fs", kx) : sprintf(">%.1fs", kend)
		ts = tx >= 0 ? sprintf("%.1fs", tx) : sprintf(">%.1fs", tend)
		if (kx >= 0 && tx >= 0) rs = sprintf("%.2f", kx / tx)
		else if (kx >= 0) rs = sprintf("<%.2f", kx / tend)
		else if (tx >= 0) rs = sprintf(">%.2f", kend / tx)
		else rs = "n/a"
		printf "time-to-90%%-hot kernel=%s tierd=%s ratio=%s\n", ks, ts, rs
	}' "$raw"
} | tee "$OUT"
echo "wrote $OUT"
