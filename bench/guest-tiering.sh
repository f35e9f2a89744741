#!/bin/bash
# bench/guest-tiering.sh - `make bench-guest`: the GUPS-like workload
# (bench/progs/gups.c: 640 MiB array starting on node 1 of which 96 MiB of
# pages, the hot set, take 90% of the random updates, plus 600 MiB of cold
# memory first touched on node 0) in the three-tier QEMU guest, in one boot
# (bench/progs/guest-tiering-guest.sh), for each of two hot-set layouts:
#   contiguous  the hot set is the array's first 96 MiB
#   scattered   the hot set is 24576 pages picked one by one across the
#               whole array (about one page in 6.7; gups --layout scattered)
# and for each layout three runs of the same workload, one after the other:
#   none    no tiering: numa_balancing=0, demotion off, no tierd
#   kernel  the kernel's own tiering: numa_balancing=2, demotion_enabled=true
#   tierd   `tierd --foreground`, default configuration (it switches the
#           kernel's tiering, which is on when it starts, off itself)
# damon_stat, where the kernel has it on, is off for every run. Prints one
# table per run, one line per second (hot set on node 0, cold pages on node
# 0, the update rate, tierd's and kdamond's CPU), then for each layout the
# lines
#   time-to-90%-hot kernel=Xs tierd=Ys ratio=R   (R = kernel / tierd: > 1, tierd is faster)
#   workload-rate tierd/none=F kernel/none=G     (mean update rates over the no-tiering run's)
#   workload-cpu tierd/none=F kernel/none=G      (the updating thread's user CPU over the run's
#                                                 wall time, over the no-tiering run's: what the
#                                                 tiering left the workload of its one CPU)
#   system-cpu tierd=P%                          (tierd + kdamond CPU over the run's wall time)
#   system-cpu-from-10s tierd=P%                 (the same from the first tick at 10 s on: the
#                                                 steady cost, without the first placement's)
#   cold-promoted kernel=N tierd=M               (pages outside the hot set on node 0 at the end)
#   step-cpu tierd total=X tracker=X maps=X ...  (tierd's steps' CPU seconds by part, its status)
#   thread-cpu tierd tierd=X tierd-step=X ...    (CPU seconds of tierd's threads by name over the run)
# and writes them to bench/results/guest-tiering.txt. About 10 min wall with
# the defaults (~75 s a run, six runs, and the boot).
#
#   bench/guest-tiering.sh [--kernel SUITE] [--layout LAYOUTS] [--out FILE]
#                          [--render RAW] [SECONDS [SETTLE [TRACKER [MAX_CPU_PERCENT]]]]
# --kernel: the guest kernel (scripts/tiered-vm --kernel: a Debian suite such
# as sid, or a bzImage path; default the test bed's, Linux 6.12); any other
# kernel writes bench/results/guest-tiering[-TRACKER-cpuPERCENT]-SUITE.txt.
# --layout: contiguous, scattered or both comma-separated (the default);
# one alone writes bench/results/guest-tiering[...]-LAYOUT[-SUITE].txt.
# --out: write FILE instead (e.g. a short check that leaves the results be).
# --render RAW: boot nothing; make the tables and lines from RAW, the guest's
# raw output kept by an earlier run (BENCH_GUEST_RAW below), to --out FILE
# or standard output.
# SECONDS: ticks per run (default 60); SETTLE: stop the kernel and tierd runs
# that many seconds after their hot set reached 90% on node 0 (default 0:
# never early); TRACKER: tierd's policy.tracker, MAX_CPU_PERCENT its
# daemon.max_cpu_percent (default auto and 5: the default configuration;
# others write bench/results/guest-tiering-TRACKER-cpuPERCENT.txt).
# TIERD_BUILD (default build/) names the build directory; BENCH_GUEST_RAW=FILE
# keeps the guest's raw output (gups's tick lines) in FILE;
# BENCH_GUEST_LOG_LEVEL=debug runs tierd at that daemon.log_level (a line
# per step with its CPU by part, kept in the raw output).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
KERNEL=
LAYOUTS=contiguous,scattered
OUT=
RENDER=
. "$ROOT/bench/opts.sh"
bench_opt() {
	case $1 in
	kernel) KERNEL=$2 ;;
	layout) LAYOUTS=$2 ;;
	out) OUT=$2 ;;
	render) RENDER=$2 ;;
	esac
}
bench_opts bench-guest "kernel layout out render" \
	"(--kernel SUITE, --layout LAYOUTS, --out FILE, --render RAW)" "$@"
set -- "${BENCH_ARGS[@]}"
bench_layouts bench-guest "$LAYOUTS"
SECS=${1:-60}
SETTLE=${2:-0}
TRACKER=${3:-auto}
MAXCPU=${4:-}
case $SECS$SETTLE in
*[!0-9]*) echo "bench-guest: SECONDS and SETTLE are whole seconds (got '$SECS' '$SETTLE')" >&2
	exit 2 ;;
esac
TOPO="100:20G:768 250:8G:768 500:2G:768"
if [ -n "$RENDER" ]; then
	[ -r "$RENDER" ] || { echo "bench-guest: --render $RENDER: cannot read it" >&2; exit 2; }
elif [ -z "$OUT" ]; then
	OUT=$ROOT/bench/results/guest-tiering.txt
	[ "$TRACKER" = auto ] && [ -z "$MAXCPU" ] ||
		OUT=$ROOT/bench/results/guest-tiering-$TRACKER-cpu${MAXCPU:-5}.txt
	[ "$LAYOUTS" = contiguous,scattered ] || OUT=${OUT%.txt}-${LAYOUTS//,/-}.txt
	[ -z "$KERNEL" ] || OUT=${OUT%.txt}-$(basename "$KERNEL").txt
fi
nlayouts=$(echo "${LAYOUTS//,/ }" | wc -w)
VM_KERNEL=()
[ -z "$KERNEL" ] || VM_KERNEL=(--kernel "$KERNEL")
export TIERED_VM_BUILD_DIR=$B
# One vCPU unless TIERED_VM_SMP says otherwise: under single-threaded TCG a
# TLB shootdown to another vCPU makes its sender spin until that vCPU's
# turn comes. tierd moves pages of a process on the other vCPU and pays
# that per move (20-25 us a page with 2 vCPUs, 12-18 us with one, on
# Linux 6.12 in separate runs);
# the kernel's promotions run in the faulting task and flush locally; on
# the hwtlb kernels every accessed-bit clearing flushes, and the kdamond
# took 48 s of 60 with 2 vCPUs, 2.8 s with one (docs/tiered-vm.md).
export TIERED_VM_SMP=${TIERED_VM_SMP:-1}

table=$(mktemp)
trap 'rm -f "$table"' EXIT
if [ -n "$RENDER" ]; then
	raw=$RENDER
	ran="rendered from $RENDER, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
else
	if ! command -v qemu-system-x86_64 >/dev/null; then
		echo "bench-guest: qemu-system-x86_64 is not installed (scripts/install-deps)" >&2
		exit 1
	fi
	for f in gups tierd tierctl; do
		[ -x "$B/$f" ] || { echo "bench-guest: $B/$f missing (make)" >&2; exit 1; }
	done
	raw=$(mktemp)
	trap 'rm -f "$raw" "$table"' EXIT
	[ -z "${BENCH_GUEST_RAW:-}" ] || trap 'cp "$raw" "$BENCH_GUEST_RAW"; rm -f "$raw" "$table"' EXIT
	start=$(date +%s)
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	"$ROOT/scripts/tiered-vm" "${VM_KERNEL[@]}" --timeout $(((SECS + 60) * 3 * nlayouts + 200)) \
		--topology "$TOPO" --files "$B/gups $ROOT/bench/progs/guest-tiering-guest.sh" \
		-- guest-tiering-guest.sh "$SECS" "$SETTLE" "$TRACKER" "$MAXCPU" "$LAYOUTS" \
		"${BENCH_GUEST_LOG_LEVEL:-}" >"$raw" || {
		rc=$?
		cat "$raw"
		echo "bench-guest: the guest run failed (status $rc); nothing written" >&2
		exit 1
	}
	ran="$(date -u +%Y-%m-%dT%H:%M:%SZ), $(($(date +%s) - start)) s wall, host load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	mkdir -p "$(dirname "$OUT")"
fi
{
	opts="${KERNEL:+--kernel $KERNEL }--layout $LAYOUTS"
	echo "# command: bench/guest-tiering.sh $opts $SECS $SETTLE $TRACKER $MAXCPU (make bench-guest${KERNEL:+ KERNEL=$KERNEL}), $ran"
	# What was measured: the commit the binaries were built from (tierd
	# --version), not the work tree when the bench ran.
	echo "# tree: $("$B/tierd" --version 2>/dev/null | sed -n 's/^tierd //p' | grep . || echo unknown) (tierd --version)"
	echo "# guest: scripts/tiered-vm ${VM_KERNEL[*]} --topology \"$TOPO\" (QEMU TCG, $TIERED_VM_SMP vCPU(s) on one host thread), $(uname -m) host"
	echo "# workload: gups, 640 MiB array preferring node 1 for its first touch then unbound; 96 MiB of its pages"
	echo "#   (24576) = hot set with 90% of the random 8-byte updates, the other 10% uniform over the other"
	echo "#   544 MiB (139264 pages, 'cold' below); plus 600 MiB of idle memory first touched on node 0"
	echo "#   (preferred) and never touched again. Layout contiguous: the hot set is the array's first 96 MiB;"
	echo "#   scattered: 24576 pages picked one by one across the array by a seeded shuffle"
	echo "# runs, for each layout, one after the other in the same boot: none (numa_balancing=0, demotion off),"
	echo "#   kernel (numa_balancing=2, demotion_enabled=true), tierd (tierd --foreground, default config; it"
	echo "#   switched kernel tiering off); damon_stat off throughout"
	echo "# per tick (nominally 1 s; 'at' = seconds since the workload started its updates):"
	echo "#   hot%    share of the 24576 hot pages on node 0 (move_pages status of every hot page)"
	echo "#   cold0   pages of the 544 MiB outside the hot set on node 0 (every 16th page queried, x16)"
	echo "#   idle%   share of the 600 MiB idle memory still on node 0 (every 16th page)"
	echo "#   Mupd/s  the workload's update rate since the previous tick (millions/s)"
	echo "#   MiB     pages migrated in that tick (/proc/vmstat pgmigrate_success x 4096: the kernel's moves"
	echo "#           in the kernel run, tierd's move_pages in the tierd run)"
	echo "#   tierd_s tierd's CPU seconds since the workload started (every thread, /proc/PID/stat)"
	echo "#   kd_s    CPU seconds since the workload started of the kdamonds listed in DAMON's sysfs"
	echo "#           (kdamonds/N/pid, /proc/PID/stat)"
	echo "#   kd_st   the same as tierd's status reports it (kdamond_cpu_seconds since the workload started)"
	echo "#   steps   tierd's policy steps since the workload started (status; '*': the status did not answer"
	echo "#           since the previous tick, last figures)"
	echo "#   cpu%    (tierd + kdamond CPU) in that tick over its length, % of one core"
	echo "#   time-to-90%-hot: 'at' of the first tick with >= 90% of the hot set on node 0"
	awk '/^== run / { run = $3 } /^# / && run != "" { sub(/^# /, "# guest " run ": "); print }
		/^# / && run == "" { sub(/^# /, "# guest: "); print }' "$raw"
	awk '
	function kv(    i, a) {
		delete f
		for (i = 2; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] }
	}
	function num(x) { sub(/\*$/, "", x); return x + 0 }
	/^== run / {
		run = $3; split(run, rl, "/"); lay = rl[1]; mode = rl[2]
		if (!(lay in seen)) { seen[lay] = 1; layouts[++nl] = lay }
		nt = 0; pat = 0; pmig = 0; pcpu = 0; reached = -1; upd = 0
		printf "\n== workload=%s run=%s\n", lay, mode
		printf "%4s %6s %6s %7s %6s %7s %7s %8s %7s %8s %6s %6s\n", "t", "at", "hot%", "cold0", "idle%", "Mupd/s", "MiB", "tierd_s", "kd_s", "kd_st", "steps", "cpu%"
		next
	}
	/^tick / {
		kv()
		at = f["at"] + 0; hot = f["hot0"] / f["hot"]
		cold0 = f["restn"] ? f["rest0"] * 16 : 0
		idle = f["coldn"] ? 100 * f["cold0"] / f["coldn"] : 0
		mig = f["vm_migrated"] * 4096 / 1048576
		td = ("tierd_cpu" in f) ? f["tierd_cpu"] + 0 : 0
		kd = f["kd_cpu"] + 0
		cpu = td + kd
		pct = at > pat ? 100 * (cpu - pcpu) / (at - pat) : 0
		if (mode == "tierd") {
			star = (f["steps"] ~ /\*$/) ? "*" : ""
			kst = num(f["tierd_kd"]) < 0 ? "-" : sprintf("%.2f", num(f["tierd_kd"]))
			tcols = sprintf("%8.2f %7.2f %8s %5d%1s", td, kd, kst, num(f["steps"]), star)
		} else
			tcols = sprintf("%8s %7.2f %8s %6s", "-", kd, "-", "-")
		printf "%4d %6.1f %6.1f %7d %6.1f %7.2f %7.1f %s %6.1f\n", f["t"], at, 100 * hot, cold0, idle, f["rate"] / 1e6, mig - pmig, tcols, pct
		upd += f["rate"] * (at - pat)
		if (reached < 0 && hot >= 0.9) reached = at
		pat = at; pmig = mig; pcpu = cpu
		R[lay, mode, "at"] = at; R[lay, mode, "upd"] = upd; R[lay, mode, "r90"] = reached
		R[lay, mode, "tierd"] = td; R[lay, mode, "kd"] = kd
		R[lay, mode, "wlu"] = f["wl_user"] + 0; R[lay, mode, "wls"] = f["wl_sys"] + 0
		if (R[lay, mode, "at10"] == "" && at >= 10) { R[lay, mode, "at10"] = at; R[lay, mode, "cpu10"] = cpu }
		R[lay, mode, "kdst"] = num(f["tierd_kd"]); R[lay, mode, "steps"] = num(f["steps"])
		if (R[lay, mode, "first"] == "" && mode == "tierd" && mig > 0) R[lay, mode, "first"] = at
		next
	}
	/^# status: / && mode == "tierd" {
		# The step CPU by part, as the last status of tierd gives it.
		k = index($0, "\"step_cpu_seconds\":")
		if (k > 0) {
			o = substr($0, k + 20); o = substr(o, 1, index(o, "}") - 1)
			n = split(o, kvs, ","); line = ""
			for (i = 1; i <= n; i++) {
				split(kvs[i], p, ":"); gsub(/"/, "", p[1])
				line = line sprintf(" %s=%.2f", p[1], p[2])
			}
			R[lay, "stepcpu"] = line
		}
		next
	}
	/^threads / && mode == "tierd" {
		line = ""
		for (i = 2; i <= NF; i++) { split($i, a, "="); line = line sprintf(" %s=%.2f", a[1], a[2]) }
		R[lay, "threads"] = line
		next
	}
	/^end / {
		kv()
		R[lay, mode, "rest0"] = f["rest0"]; R[lay, mode, "rest"] = f["rest"]
		printf "# %s/%s end: hot set on node 0: %d of %d pages (%.1f%%); other 544 MiB on node 0 (cold promoted): %d of %d pages (%.1f%%); 600 MiB idle memory still on node 0: %d of %d pages (%.1f%%)\n",
			lay, mode, f["hot0"], f["hot"], 100 * f["hot0"] / f["hot"], f["rest0"], f["rest"], 100 * f["rest0"] / f["rest"],
			f["cold0"], f["cold"], 100 * f["cold0"] / f["cold"]
		d = R[lay, mode, "at"]
		printf "# %s/%s update rate: mean %.2f M/s over %.1f s\n", lay, mode, (d > 0 ? R[lay, mode, "upd"] / d / 1e6 : 0), d
		if (d > 0 && R[lay, mode, "wlu"] >= 0)
			printf "# %s/%s updating thread CPU: user %.2f s (%.1f%%), system %.2f s (%.1f%%) of %.1f s\n", lay, mode,
				R[lay, mode, "wlu"], 100 * R[lay, mode, "wlu"] / d, R[lay, mode, "wls"], 100 * R[lay, mode, "wls"] / d, d
		if (mode == "tierd") {
			printf "# %s/tierd CPU: tierd %.2f s + kdamond %.2f s (DAMON sysfs pids; tierd status says %s) over %.1f s = %.1f%% of one core; %d steps, first move %s\n",
				lay, R[lay, mode, "tierd"], R[lay, mode, "kd"],
				(R[lay, mode, "kdst"] < 0 ? "nothing" : sprintf("%.2f s", R[lay, mode, "kdst"])), d,
				(d > 0 ? 100 * (R[lay, mode, "tierd"] + R[lay, mode, "kd"]) / d : 0), R[lay, mode, "steps"],
				(R[lay, mode, "first"] == "" ? "never" : "in the tick ending at " R[lay, mode, "first"] " s")
		} else if (R[lay, mode, "kd"] > 0)
			printf "# %s/%s kdamond CPU: %.2f s (a kdamond not of this run)\n", lay, mode, R[lay, mode, "kd"]
		next
	}
	function t90(lay, mode,    x) {
		x = R[lay, mode, "r90"]
		return x >= 0 ? sprintf("%.1fs", x) : sprintf(">%.1fs", R[lay, mode, "at"])
	}
	function rate(lay, mode) { return R[lay, mode, "at"] > 0 ? R[lay, mode, "upd"] / R[lay, mode, "at"] : 0 }
	function wcpu(lay, mode) { return R[lay, mode, "at"] > 0 && R[lay, mode, "wlu"] > 0 ? R[lay, mode, "wlu"] / R[lay, mode, "at"] : 0 }
	END {
		for (i = 1; i <= nl; i++) {
			lay = layouts[i]
			kx = R[lay, "kernel", "r90"]; tx = R[lay, "tierd", "r90"]
			kend = R[lay, "kernel", "at"]; tend = R[lay, "tierd", "at"]
			if (kx >= 0 && tx >= 0) rs = tx > 0 ? sprintf("%.2f", kx / tx) : "inf"
			else if (kx >= 0) rs = sprintf("<%.2f", kx / tend)
			else if (tx >= 0) rs = tx > 0 ? sprintf(">%.2f", kend / tx) : "inf"
			else rs = "n/a"
			none = rate(lay, "none")
			printf "\n== workload=%s\n", lay
			printf "time-to-90%%-hot kernel=%s tierd=%s ratio=%s\n", t90(lay, "kernel"), t90(lay, "tierd"), rs
			printf "workload-rate tierd/none=%.2f kernel/none=%.2f\n", (none > 0 ? rate(lay, "tierd") / none : 0), (none > 0 ? rate(lay, "kernel") / none : 0)
			wnone = wcpu(lay, "none")
			if (wnone > 0)
				printf "workload-cpu tierd/none=%.2f kernel/none=%.2f\n", wcpu(lay, "tierd") / wnone, wcpu(lay, "kernel") / wnone
			printf "system-cpu tierd=%.1f%%\n", (tend > 0 ? 100 * (R[lay, "tierd", "tierd"] + R[lay, "tierd", "kd"]) / tend : 0)
			a10 = R[lay, "tierd", "at10"]
			if (a10 != "" && tend > a10)
				printf "system-cpu-from-10s tierd=%.1f%%\n", 100 * (R[lay, "tierd", "tierd"] + R[lay, "tierd", "kd"] - R[lay, "tierd", "cpu10"]) / (tend - a10)
			printf "cold-promoted kernel=%d tierd=%d\n", R[lay, "kernel", "rest0"], R[lay, "tierd", "rest0"]
			if (R[lay, "stepcpu"] != "")
				printf "step-cpu tierd%s\n", R[lay, "stepcpu"]
			if (R[lay, "threads"] != "")
				printf "thread-cpu tierd%s\n", R[lay, "threads"]
		}
	}' "$raw"
} >"$table"
if [ -z "$OUT" ]; then
	cat "$table"
else
	cp "$table" "$OUT"
	[ -n "$RENDER" ] || { cat "$OUT"; echo "wrote $OUT"; }
fi
