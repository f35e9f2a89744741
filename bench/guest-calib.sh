#!/bin/bash
# bench/guest-calib.sh - `make calib-guest`: tiersim against the test guest
# (docs/tiersim.md, "Calibration against the guest"). Takes the hot set's
# share on node 0 per second from a bench/guest-tiering.sh results file
# (the guest: gups in the three-tier QEMU guest) and runs the same workload
# in tiersim on the guest's machine (bench/machines/guest.yaml, workload
# gups-guest with the layout's update rate), then prints per second
#   at  guest%  tiersim%  diff  verdict
# verdict: ok (within TOL percentage points), DRIFT (not, and not known),
# known (not, at a second KNOWN names: the model lacks what makes the guest
# differ there, docs/tiersim.md says what), or fixed (a KNOWN second that
# agrees now: take it off the list). Seconds 1 and 2 are shown, not judged.
# Exit status 1 on any DRIFT or fixed, 0 otherwise, 2 on bad usage.
#
#   bench/guest-calib.sh [--results FILE] [--layout contiguous|scattered]
#                        [--run kernel|tierd] [--seconds N] [--tol PP]
#                        [--known SECONDS] [--rate M] [--tracker T]
# --results: a bench/guest-tiering.sh output (default
#   bench/results/guest-tiering.txt); --layout: contiguous (default);
# --run: kernel (tiersim policy kernel-nb, the default) or tierd (tierd);
# --seconds: seconds compared (default: every tick of the run in FILE);
# --tol: percentage points (default 10); --known: comma-separated seconds
#   or ranges (3-9) where the model is known not to agree; --rate: the
#   update rate, M/s (default: the run's "none" mean in FILE, else the
#   workload's default); --tracker: tiersim's tracker list for the run
#   (default: kernel-nb's own for the kernel run; for the tierd run the
#   tracker the guest's tierd ran with, its status's "tracker" in FILE, as
#   tiersim names its model: damon+softdirty is damon,softdirty-rounds,
#   softdirty is softdirty-rounds, damon+hint is damon,hintfault, hint is
#   hintfault - the policy gets the inputs the guest's had; a tracker
#   tiersim has no model of is an error).
# A new guest series: bench/guest-tiering.sh --layout contiguous --out FILE 30
# (about 3 min), then --results FILE here. TIERD_BUILD names the build.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
RESULTS=$ROOT/bench/results/guest-tiering.txt
LAYOUT=contiguous
RUN=kernel
SECS=
TOL=10
KNOWN=
RATE=
TRACKER=
usage() { echo "guest-calib: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--results | --layout | --run | --seconds | --tol | --known | --rate | --tracker)
		[ $# -ge 2 ] || usage "$1 needs a value"
		opt=${1#--}; val=$2; shift 2 ;;
	*) usage "unknown argument $1 (--results FILE, --layout L, --run kernel|tierd, --seconds N, --tol PP, --known SECONDS, --rate M, --tracker T)" ;;
	esac
	case $opt in
	results) RESULTS=$val ;;
	layout) LAYOUT=$val ;;
	run) RUN=$val ;;
	seconds) SECS=$val ;;
	tol) TOL=$val ;;
	known) KNOWN=$val ;;
	rate) RATE=$val ;;
	tracker) TRACKER=$val ;;
	esac
done
case $LAYOUT in contiguous | scattered) ;; *) usage "--layout $LAYOUT: contiguous or scattered" ;; esac
case $RUN in
kernel) POLICY=kernel-nb ;;
tierd) POLICY=tierd ;;
*) usage "--run $RUN: kernel or tierd" ;;
esac
[ -r "$RESULTS" ] || usage "--results $RESULTS: cannot read it"
[[ -z $SECS || $SECS =~ ^[1-9][0-9]*$ ]] || usage "--seconds $SECS: a whole number above 0"
[[ $TOL =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage "--tol $TOL: percentage points, a number"
[[ -z $KNOWN || $KNOWN =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
	usage "--known $KNOWN: seconds or ranges, comma-separated (3-9,12)"

# The guest's series: "at hot%" per tick of the run's table.
GUEST=$(awk -v want="== workload=$LAYOUT run=$RUN" '
	$0 == want { p = 1; next }
	p && /^==/ { exit }
	p && /^ +[0-9]/ { printf "%d %s\n", $2 + 0.5, $3 }' "$RESULTS")
[ -n "$GUEST" ] || usage "--results $RESULTS: no table for layout $LAYOUT, run $RUN"
if [ -z "$RATE" ]; then
	RATE=$(sed -n "s|^# $LAYOUT/none update rate: mean \([0-9.]*\) M/s.*|\1|p" "$RESULTS" | head -1)
fi
[ -z "$SECS" ] && SECS=$(echo "$GUEST" | tail -1 | cut -d' ' -f1)
# The tierd run's tracker: what the guest's tierd ran with.
if [ -z "$TRACKER" ] && [ "$RUN" = tierd ]; then
	gt=$(sed -n "s|^# guest $LAYOUT/tierd: status: .*\"tracker\":\"\([^\"]*\)\".*|\1|p" "$RESULTS" | head -1)
	case $gt in
	damon+softdirty) TRACKER=damon,softdirty-rounds ;;
	softdirty) TRACKER=softdirty-rounds ;;
	damon+hint) TRACKER=damon,hintfault ;;
	hint) TRACKER=hintfault ;;
	damon | idle) TRACKER=$gt ;;
	"") usage "--results $RESULTS: no status of the $LAYOUT tierd run names its tracker; name tiersim's with --tracker" ;;
	*) usage "--results $RESULTS: the guest's tierd ran with tracker '$gt', which tiersim has no model of; name one with --tracker" ;;
	esac
fi
WL="gups-guest:layout=$LAYOUT${RATE:+:rate=$RATE}"
T=$(mktemp -d /tmp/tierd-guest-calib.XXXXXX)
trap 'rm -rf "$T"' EXIT
"$B/tiersim" run --machine "file:$ROOT/bench/machines/guest.yaml" --workload "$WL" \
	--policy "$POLICY" ${TRACKER:+--tracker "$TRACKER"} --duration "$SECS" --timeline "$T/tl.csv" >"$T/run.txt"
echo "# guest: $RESULTS, layout $LAYOUT, run $RUN ($(sed -n 's/^# tree: /tree /p' "$RESULTS" | head -1))"
echo "# tiersim: run --machine file:bench/machines/guest.yaml --workload $WL --policy $POLICY${TRACKER:+ --tracker $TRACKER} --duration $SECS"
echo "# tolerance $TOL pp from second 3${KNOWN:+; known not to agree: $KNOWN}"
echo "  at  guest%  tiersim%   diff  verdict"
# tiersim's share at each whole second: the last 100 ms row at or before it.
awk -F, -v tol="$TOL" -v known="$KNOWN" -v secs="$SECS" '
	FNR == 1 && FILENAME != "-" { for (i = 1; i <= NF; i++) if ($i == "hot_fast_share") col = i; next }
	FILENAME != "-" { t = int($1 * 10 + 0.5); if (t % 10 == 0) sim[t / 10] = $col * 100; next }
	{ split($0, g, " "); guest[g[1]] = g[2] }
	END {
		n = split(known, r, ",")
		for (i = 1; i <= n; i++) {
			m = split(r[i], ab, "-")
			for (k = ab[1]; k <= (m > 1 ? ab[2] : ab[1]); k++) isknown[k] = 1
		}
		bad = 0
		for (s = 1; s <= secs; s++) {
			if (!(s in guest)) continue
			if (!(s in sim)) { printf "%4d  %6.1f  %8s  %5s  DRIFT (no tiersim figure)\n", s, guest[s], "-", "-"; bad = 1; continue }
			d = sim[s] - guest[s]; a = d < 0 ? -d : d
			if (s <= 2) v = "-"
			else if (a <= tol) { v = isknown[s] ? "fixed" : "ok"; if (isknown[s]) bad = 1 }
			else { v = isknown[s] ? "known" : "DRIFT"; if (!isknown[s]) bad = 1 }
			printf "%4d  %6.1f  %8.1f  %+5.1f  %s\n", s, guest[s], sim[s], d, v
		}
		exit bad
	}' "$T/tl.csv" - <<<"$GUEST"
