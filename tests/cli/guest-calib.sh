# guest-calib.sh - tiersim against the test guest (docs/tiersim.md,
# "Calibration against the guest"): the guest machine and gups-guest under
# kernel-nb must follow the hot set's share on node 0 per second that the
# guest recorded (make bench-guest at 941e57c, Linux 6.12, host load about
# 1, kept as tests/fixtures/guest-calib/guest-tiering-6.12-941e57c.txt so
# that a new bench run, which rewrites bench/results/guest-tiering.txt, does
# not move the test; the contiguous kernel run) within 10 percentage points
# at every second from the
# third, but for the seconds marked known below; plus gups-guest's
# placement and its bad parameters.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
M=file:$ROOT/bench/machines/guest.yaml
R=$ROOT/tests/fixtures/guest-calib/guest-tiering-6.12-941e57c.txt
T=$(mktemp -d /tmp/tierd-guest-calib-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT

# Seconds 3-9: the guest's first scan pass promoted 65% of the hot set and
# the next pass came at ~10 s; the model promotes ~98% in the first pass
# (docs/tiersim.md says what it lacks: the guest's kswapd and faults on one
# TCG vCPU, ten times slower than the host). Take a second off this list
# when the model meets it: the script then says "fixed" and fails.
KNOWN=3-9
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R" --layout contiguous \
	--run kernel --seconds 20 --known "$KNOWN"
is "$rc" 0 "kernel-nb follows the guest's contiguous kernel run within 10 pp (seconds 3-20, known $KNOWN aside)"
echo "$out" | sed 's/^/# /'
is "$(echo "$out" | grep -c ' ok$')" 11 "seconds 10-20 agree"

# The check fails on drift: without the known seconds, seconds 3-5 drift.
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R" --layout contiguous \
	--run kernel --seconds 5
is "$rc" 1 "without the known seconds the drift fails the check"
is "$(echo "$out" | grep -c ' DRIFT$')" 3 "seconds 3-5 reported as DRIFT"

# The placement after set-up matches the guest's "after set-up" free memory
# (50, 102 and 711 MiB on nodes 0, 1, 2) before any move.
run "$B/tiersim" run --machine "$M" --workload gups-guest --policy static --duration 1 \
	--timeline "$T/tl.csv"
is "$rc" 0 "gups-guest under static runs"
is "$(sed -n 2p "$T/tl.csv" | awk -F, '{print (650*256-$6)/256, (742*256-$8)/256, (711*256-$10)/256, $12}')" \
	"50 102 711 0.0000" "free MiB per node after first touch as in the guest; no hot page on node 0"
is "$(head -1 "$T/tl.csv" | awk -F, '{print $NF}')" hot_fast_share "the timeline has the hot set's share"

# Bad parameters: one line naming the parameter, exit 2.
run "$B/tiersim" run --machine "$M" --workload gups-guest:layout=diagonal --policy static
is "$rc" 2 "layout=diagonal: exit 2"
like "$err" "layout 'diagonal': expected contiguous or scattered" "layout=diagonal: named"
run "$B/tiersim" run --machine "$M" --workload gups-guest:rate=0 --policy static
is "$rc" 2 "rate=0: exit 2"
like "$err" "rate '0'" "rate=0: named"
run "$B/tiersim" run --machine "$M" --workload gups-guest:hot=0.4 --policy static
is "$rc" 2 "hot=0.4: exit 2"
like "$err" "unknown parameter 'hot'" "hot=0.4: an unknown parameter, named"
done_testing
