# guest-calib.sh - tiersim against the test guest (docs/tiersim.md,
# "Calibration against the guest"): the guest machine and gups-guest under
# kernel-nb must follow the hot set's share on node 0 per second that the
# guest recorded (make bench-guest at 941e57c, Linux 6.12, host load about
# 1, kept as tests/fixtures/guest-calib/guest-tiering-6.12-941e57c.txt so
# that a new bench run, which rewrites bench/results/guest-tiering.txt, does
# not move the test; the contiguous kernel run) within 10 percentage points
# at every second from the
# third, but for the seconds marked known below; so must kernel-nb and
# tierd the newer recording's (8f0b84a with tierd of e02747d, Linux 6.12,
# host load about 1: tests/fixtures/guest-calib/guest-tiering-6.12-8f0b84a.txt);
# plus gups-guest's placement and its bad parameters.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
M=file:$ROOT/bench/machines/guest.yaml
R=$ROOT/tests/fixtures/guest-calib/guest-tiering-6.12-941e57c.txt
T=$(mktemp -d /tmp/tierd-guest-calib-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT

# Seconds 3-9: the guest's first scan pass promoted 65% of the hot set and
# the next pass came at ~10 s; the model promotes ~92% in the first pass
# and scans the hot set again at 7 s (docs/tiersim.md says what it lacks).
# Take a second off this list when the model meets it: the script then
# says "fixed" and fails.
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

# The newer recording. kernel-nb, contiguous: the guest's first pass left
# 69.1% of the hot set up until its second at 9 s; the model's has 91.8%
# and its second at 7 s (seconds 3-8 known, for the same reasons).
R2=$ROOT/tests/fixtures/guest-calib/guest-tiering-6.12-8f0b84a.txt
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R2" --layout contiguous \
	--run kernel --seconds 20 --known 3-8
is "$rc" 0 "kernel-nb follows the newer recording's contiguous kernel run (known 3-8 aside)"
is "$(echo "$out" | grep -c ' ok$')" 12 "seconds 9-20 agree"

# tierd, contiguous: the first step promotes the whole hot set in the guest
# (100% at 1 s) and in the model; every second agrees, none is known.
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R2" --layout contiguous \
	--run tierd --seconds 20
is "$rc" 0 "tierd follows the guest's contiguous tierd run within 10 pp (seconds 3-20)"
echo "$out" | sed 's/^/# /'
is "$(echo "$out" | grep -c ' ok$')" 18 "seconds 3-20 agree"

# tierd, scattered: the guest's tierd had 27.3% of the hot set up at 3 s
# and 33.7% at 17-20 s (7 steps in 60 s, paced by its CPU budget at ~0.2 s
# of TCG CPU a step); the model's, a step every 100 ms, has 96% at 3 s.
# Every second from the third is known.
KNOWN_TIERD=3-20
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R2" --layout scattered \
	--run tierd --seconds 20 --known "$KNOWN_TIERD"
is "$rc" 0 "tierd on the scattered run: every second from the third known ($KNOWN_TIERD)"
is "$(echo "$out" | grep -c ' known$')" 18 "seconds 3-20 known"

# The tierd check fails on drift either way: the scattered run without its
# known seconds drifts at 3-5; a known second that agrees (5 on the
# contiguous run) is "fixed" and fails too.
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R2" --layout scattered \
	--run tierd --seconds 5
is "$rc" 1 "tierd: without the known seconds the drift fails the check"
is "$(echo "$out" | grep -c ' DRIFT$')" 3 "tierd: seconds 3-5 reported as DRIFT"
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R2" --layout contiguous \
	--run tierd --seconds 6 --known 5
is "$rc" 1 "tierd: a known second that agrees fails the check"
is "$(echo "$out" | grep -c ' fixed$')" 1 "tierd: second 5 reported as fixed"

# tierd with the inputs the guest's had: the recording of ba850a7 (Linux
# 6.12, host load about 0.5: tests/fixtures/guest-calib/
# guest-tiering-6.12-ba850a7.txt), whose tierd ran damon+softdirty; the
# script runs tiersim's model of that tracker (damon,softdirty-rounds).
# Seconds 3-5 of both layouts are known: the guest's placement step at 1-2
# s left 86.6% (contiguous) and 73.5% (scattered) of the hot set up and its
# CPU (686 ms in a like run: 428 ms of moves at 13.5 us a page against the
# model's 8.4, and the daemon's reads of maps, pagemap and DAMON's files,
# which the model does not charge) paid for by a pause under the CPU share
# until 5-6 s; the model's next step comes at once (docs/tiersim.md).
R3=$ROOT/tests/fixtures/guest-calib/guest-tiering-6.12-ba850a7.txt
for l in contiguous scattered; do
	run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$R3" --layout $l \
		--run tierd --seconds 20 --known 3-5
	is "$rc" 0 "tierd ($l) follows the guest's ba850a7 run with its tracker (known 3-5 aside)"
	echo "$out" | sed 's/^/# /'
	is "$(echo "$out" | grep -c -- '--tracker damon,softdirty-rounds')" 1 \
		"$l: tiersim runs the guest tierd's tracker, damon+softdirty, as damon,softdirty-rounds"
	is "$(echo "$out" | grep -c ' ok$')" 15 "$l: seconds 6-20 agree"
done
# A tracker the results file does not name: the script says so.
grep -v '"tracker"' "$R3" >"$T/notracker.txt"
run env TIERD_BUILD="$B" bash "$ROOT/bench/guest-calib.sh" --results "$T/notracker.txt" \
	--layout contiguous --run tierd --seconds 5
is "$rc" 2 "no recorded tracker: exit 2"
like "$err" "no status of the contiguous tierd run names its tracker" "no recorded tracker: said"

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
