#!/bin/bash
# bench/guest-ab.sh - two tierd builds side by side on the GUPS-like
# workload of `make bench-guest` (bench/progs/gups.c), in one boot of the
# three-tier QEMU guest (bench/progs/guest-ab-guest.sh): for each of REPS
# repetitions, each layout, A's run then B's. A single run of the guest
# bench is one draw from a wide spread (the time to 90% of the hot set of
# the same build went from 3 s to 36 s between runs of one boot), and what
# a write-protect fault or a move costs differs between boots: a change is
# judged by medians of runs in the same boot.
#
#   bench/guest-ab.sh [--kernel SUITE] [--layout LAYOUTS] [--reps N]
#                     [--seconds S] [--move-at S] [--out FILE] [--render RAW]
#                     A_TIERD [B_TIERD]
# A_TIERD, B_TIERD: tierd binaries (B default: TIERD_BUILD/tierd, build/'s);
# tierctl and gups come from TIERD_BUILD. --kernel: scripts/tiered-vm's;
# --layout: contiguous, scattered or both comma-separated (default both);
# --reps: repetitions (default 3); --seconds: each run's ticks (default 45);
# --move-at: the second of each run at which the hot set moves elsewhere
# (gups --move-at: contiguous, to the array's end; scattered, to pages of
# another shuffle), to time how long tierd takes to follow it;
# --out: also write the output to FILE; --render RAW: boot nothing, summarize
# RAW (the RESULT lines of an earlier run). Prints each run's line
#   RESULT rep=R layout=L bin=tierd-a|tierd-b reached90=S hot0=N rest0=N
#          mupd=X tierd_cpu=X kd_cpu=X steps=N wl_user=X at=X [followed90=F]
# (reached90: the first second with 90% of the hot set on node 0, -1 none;
# followed90, with --move-at: the seconds from the move to 90% of the new
# hot set on node 0, -1 none;
# rest0: pages outside the hot set on node 0 at the end, the cold pages
# promoted; mupd: the mean update rate, M/s; tierd_cpu, kd_cpu: CPU
# seconds of tierd's threads and of its kdamonds; wl_user: the updating
# thread's user CPU seconds by the last tick, at: that tick's second), then
# per layout and build the medians:
#   ab LAYOUT tierd-a|tierd-b (VERSION): time-to-90%-hot median=Xs [runs]
#      cold-promoted median=N [runs] rate median=X M/s cpu median=X s
#      workload-cpu median=P% [runs] [time-to-follow median=Xs [runs]]
# (workload-cpu: wl_user over at: the share of its CPU the workload had for
# itself - under the emulator the update rate of one set-up swings 2-5
# times between runs, the share does not; docs/tiered-vm.md).
# About 65 s a run: 12 runs and the boot with the defaults, 14 min.
# BENCH_GUEST_LOG_LEVEL=debug runs both builds at that daemon.log_level and
# keeps each run's tierd log after its RESULT line (a line per step and
# resume with its CPU and moves).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
KERNEL=
LAYOUTS=contiguous,scattered
REPS=3
SECS=45
MOVE_AT=-
OUT=
RENDER=
usage="(--kernel SUITE, --layout LAYOUTS, --reps N, --seconds S, --move-at S, --out FILE, --render RAW)"
. "$ROOT/bench/opts.sh"
bench_opt() {
	case $1 in
	kernel) KERNEL=$2 ;;
	layout) LAYOUTS=$2 ;;
	reps) REPS=$2 ;;
	seconds) SECS=$2 ;;
	move-at) MOVE_AT=$2 ;;
	out) OUT=$2 ;;
	render) RENDER=$2 ;;
	esac
}
bench_opts guest-ab "kernel layout reps seconds move-at out render" "$usage" "$@"
set -- "${BENCH_ARGS[@]}"
bench_layouts guest-ab "$LAYOUTS"
case $REPS$SECS in
*[!0-9]* | '') echo "guest-ab: --reps and --seconds are whole numbers (got '$REPS' '$SECS')" >&2
	exit 2 ;;
esac
[ "$REPS" -ge 1 ] && [ "$SECS" -ge 5 ] ||
	{ echo "guest-ab: --reps at least 1, --seconds at least 5 (got $REPS, $SECS)" >&2; exit 2; }
case $MOVE_AT in
-) ;;
*[!0-9]* | '') echo "guest-ab: --move-at $MOVE_AT: a second of the run, 1 to --seconds ($SECS)" >&2
	exit 2 ;;
*) [ "$MOVE_AT" -ge 1 ] && [ "$MOVE_AT" -lt "$SECS" ] ||
	{ echo "guest-ab: --move-at $MOVE_AT: a second of the run, 1 to --seconds ($SECS)" >&2; exit 2; } ;;
esac

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -n "$RENDER" ]; then
	[ -r "$RENDER" ] || { echo "guest-ab: --render $RENDER: cannot read it" >&2; exit 2; }
	cp "$RENDER" "$TMP/raw"
else
	[ $# -ge 1 ] && [ $# -le 2 ] ||
		{ echo "guest-ab: name A_TIERD and optionally B_TIERD (default $B/tierd)" >&2; exit 2; }
	A=$1
	BB=${2:-$B/tierd}
	for f in "$A" "$BB"; do
		[ -x "$f" ] || { echo "guest-ab: $f: not an executable tierd" >&2; exit 2; }
	done
	for f in gups tierctl; do
		[ -x "$B/$f" ] || { echo "guest-ab: $B/$f missing (make)" >&2; exit 1; }
	done
	cp "$A" "$TMP/tierd-a"
	cp "$BB" "$TMP/tierd-b"
	VM_KERNEL=()
	[ -z "$KERNEL" ] || VM_KERNEL=(--kernel "$KERNEL")
	nlayouts=$(echo "${LAYOUTS//,/ }" | wc -w)
	{
		echo "# command: bench/guest-ab.sh${KERNEL:+ --kernel $KERNEL} --layout $LAYOUTS --reps $REPS --seconds $SECS$([ "$MOVE_AT" = - ] || echo " --move-at $MOVE_AT"), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "# tierd-a: $("$TMP/tierd-a" --version 2>/dev/null | head -1) ($A)"
		echo "# tierd-b: $("$TMP/tierd-b" --version 2>/dev/null | head -1) ($BB)"
		echo "# guest: scripts/tiered-vm ${VM_KERNEL[*]} --topology \"100:20G:768 250:8G:768 500:2G:768\" (QEMU TCG, 1 vCPU)"
	} >"$TMP/raw"
	# One vCPU, as bench/guest-tiering.sh (why: there).
	TIERED_VM_SMP=${TIERED_VM_SMP:-1} TIERED_VM_BUILD_DIR=$B "$ROOT/scripts/tiered-vm" "${VM_KERNEL[@]}" \
		--timeout $(((SECS + 90) * 2 * REPS * nlayouts + 200)) \
		--topology "100:20G:768 250:8G:768 500:2G:768" \
		--files "$B/gups $TMP/tierd-a $TMP/tierd-b $ROOT/bench/progs/guest-ab-guest.sh" \
		-- guest-ab-guest.sh "$REPS" "$SECS" "$LAYOUTS" "${BENCH_GUEST_LOG_LEVEL:--}" "$MOVE_AT" \
		/usr/local/bin/tierd-a /usr/local/bin/tierd-b \
		>>"$TMP/raw" || {
		rc=$?
		cat "$TMP/raw"
		echo "guest-ab: the guest run failed (status $rc)" >&2
		exit 1
	}
fi
awk -v secs="$SECS" '
function median(s,    n, v, i, j, t) {
	n = split(s, v, " ")
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function f(name,    i, kv) {
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == name)
			return kv[2]
	}
	return ""
}
{ print }
/^# tierd-[ab]: / { sub(":", "", $2); ver[$2] = $4 }
/^RESULT / {
	k = f("layout") SUBSEP f("bin")
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	r = f("reached90") + 0
	t90[k] = t90[k] " " (r < 0 ? secs + 1 : r)
	shown[k] = shown[k] " " (r < 0 ? ">" secs : r)
	cold[k] = cold[k] " " f("rest0")
	rate[k] = rate[k] " " f("mupd")
	cpu[k] = cpu[k] " " (f("tierd_cpu") + f("kd_cpu"))
	w = f("at") + 0 > 0 && f("wl_user") != "" ? sprintf("%.1f", 100 * f("wl_user") / f("at")) : ""
	if (w != "") wcpu[k] = wcpu[k] " " w
	if (f("followed90") != "") {
		r = f("followed90") + 0
		fol[k] = fol[k] " " (r < 0 ? secs + 1 : r)
		fshown[k] = fshown[k] " " (r < 0 ? ">" secs : r)
	}
}
END {
	for (i = 1; i <= nk; i++) {
		split(order[i], p, SUBSEP)
		m = median(t90[order[i]])
		printf "ab %s %s (%s): time-to-90%%-hot median=%s [%s] cold-promoted median=%d [%s] rate median=%.2f M/s cpu median=%.2f s",
			p[1], p[2], (p[2] in ver ? ver[p[2]] : "?"), (m > secs ? ">" secs : m) "s",
			substr(shown[order[i]], 2), median(cold[order[i]]), substr(cold[order[i]], 2),
			median(rate[order[i]]), median(cpu[order[i]])
		if (wcpu[order[i]] != "")
			printf " workload-cpu median=%.1f%% [%s]", median(wcpu[order[i]]), substr(wcpu[order[i]], 2)
		if (fol[order[i]] != "") {
			m = median(fol[order[i]])
			printf " time-to-follow median=%s [%s]", (m > secs ? ">" secs : m) "s",
				substr(fshown[order[i]], 2)
		}
		printf "\n"
	}
}' "$TMP/raw" | if [ -n "$OUT" ]; then tee "$OUT"; else cat; fi
