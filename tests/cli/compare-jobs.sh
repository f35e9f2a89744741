# compare-jobs.sh - `tiersim compare --jobs N` spreads its runs over threads
# and prints what one thread prints: the table, --json and --plot byte for
# byte, in the same order; and under ASan+UBSan (build-asan, when built) a
# parallel compare ends clean.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
A=${TIERD_ASAN_BUILD:-$ROOT/build-asan}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Short runs of 2 workloads under 3 policies, the oracle one of them.
SMALL="--machine dram-cxl --duration 0.3 --workloads gups-hotset,zipf --policies tierd,kernel-nb,oracle"

run "$B/tiersim" compare $SMALL --jobs 1
is "$rc" 0 "compare --jobs 1 exits 0"
one=$out
run "$B/tiersim" compare $SMALL --jobs 4
is "$rc" 0 "compare --jobs 4 exits 0"
is "$out" "$one" "the table of --jobs 4 is that of --jobs 1"
is "$(lines "$out")" 4 "the table: a title, a header and a row per workload"

run "$B/tiersim" compare $SMALL --jobs 1 --json --plot "$TMP/one.png"
one=$out
run "$B/tiersim" compare $SMALL --jobs 4 --json --plot "$TMP/four.png"
is "$rc" 0 "compare --jobs 4 --json --plot exits 0"
is "$out" "$one" "--json of --jobs 4 is that of --jobs 1"
is "$(echo "$out" | jq -c '[.results[] | [.workload, .policy]]')" \
	'[["gups-hotset","tierd"],["gups-hotset","kernel-nb"],["gups-hotset","oracle"],["zipf","tierd"],["zipf","kernel-nb"],["zipf","oracle"]]' \
	"--json: the results in table order"
check "--plot of --jobs 4 is that of --jobs 1" cmp -s "$TMP/one.png" "$TMP/four.png"

# The default (one thread per usable CPU) gives the same JSON too.
run "$B/tiersim" compare $SMALL --json
is "$out" "$one" "--json with the default --jobs is that of --jobs 1"

run "$B/tiersim" compare $SMALL --jobs 0
is "$rc" 2 "--jobs 0: usage error"
is "$err" "tiersim compare: --jobs '0': expected 1..1024" "--jobs 0: one clear line"
run "$B/tiersim" compare $SMALL --jobs x
is "$err" "tiersim compare: --jobs 'x': expected 1..1024" "--jobs x: one clear line"

if [ -x "$A/tiersim" ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	run "$A/tiersim" compare --machine dram-cxl --duration 0.1 --workloads gups-hotset,zipf \
		--policies tierd,kernel-nb,oracle --jobs 4 --json
	is "$rc" 0 "ASan+UBSan: a parallel compare exits 0"
	is "$err" "" "ASan+UBSan: nothing reported"
	unset ASAN_OPTIONS UBSAN_OPTIONS
else
	skip "ASan+UBSan: a parallel compare" "no $A/tiersim (make asan builds it)"
fi
done_testing
