# trace.sh - tiersim convert (valgrind lackey -> trace) and trace errors on the
# command line, over the real sample in tests/fixtures/lackey.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
SAMPLE=$ROOT/tests/fixtures/lackey/sort.lackey
T=$(mktemp -d /tmp/tierd-trace-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT

run "$B/tiersim" convert --from lackey --json "$SAMPLE" "$T/sort.trc"
is "$rc" 0 "convert the lackey sample: exit 0"
is "$(echo "$out" | jq -c '[.lines, .data_lines, .instr_lines, .ignored_lines, .bad_lines, .accesses, .footprint_pages]')" \
	'[9025,2927,6073,25,0,2927,41]' "convert: line counts, accesses and dense footprint"
is "$(head -c 8 "$T/sort.trc" | od -An -c | tr -d ' ')" 'TIERTRC\n' "the output starts with the trace magic"

run "$B/tiersim" convert --from lackey "$SAMPLE" "$T/sort2.trc"
is "$out" "$T/sort2.trc: 2927 accesses to 41 pages from 9025 lines of $SAMPLE" "convert: one-line summary"
check "convert is deterministic" cmp -s "$T/sort.trc" "$T/sort2.trc"

run "$B/tiersim" convert --from lackey --include-instr --json "$SAMPLE" "$T/instr.trc"
is "$(echo "$out" | jq -c '[.accesses, .footprint_pages]')" '[9011,84]' \
	"--include-instr: fetches become reads, 11 of them cross a page"

run "$B/tiersim" convert --from lackey --sample 10 --seed 7 --json "$SAMPLE" "$T/s1.trc"
is "$(echo "$out" | jq '.accesses > 150 and .accesses < 450 and .accesses + .sampled_out == 2927')" true \
	"--sample 10 keeps about one access line in ten"
run "$B/tiersim" convert --from lackey --sample 10 --seed 7 --json "$SAMPLE" "$T/s2.trc"
check "sampling with the same seed gives the same trace" cmp -s "$T/s1.trc" "$T/s2.trc"

run sh -c "cat '$SAMPLE' | '$B/tiersim' convert --from lackey --json - '$T/stdin.trc'"
is "$(echo "$out" | jq -c '[.input, .accesses]')" '["-",2927]' "convert reads standard input as '-'"

run "$B/tiersim" run --machine dram-cxl --workload "trace:$T/sort.trc" --policy static --json
is "$rc" 0 "the converted trace replays"
is "$(echo "$out" | jq '.accesses > 0')" true "the replay counts accesses"

# A trace sizes the machine from its footprint (41 pages): at 1:8 the tiers
# hold it with a quarter to spare, in units of 6 pages, so the fast tier
# holds a share of it and the oracle can beat first touch.
run "$B/tiersim" compare --ratio 1:8 --workloads "trace:$T/sort.trc" --policies static,oracle --json
is "$rc:$err" "0:" "compare of a trace at 1:8: no warning"
is "$(echo "$out" | jq -c '[.results[0] | .footprint_pages, .fast_tier_pages]')" '[41,6]' \
	"a trace at 1:8: a fast tier of 6 of its 41 pages"
is "$(echo "$out" | jq '.results[1].amat_ns < .results[0].amat_ns')" true \
	"a trace at 1:8: the oracle beats first touch"
# An explicit unit wins, and when the fast tier holds it all, one line says so.
run "$B/tiersim" compare --ratio 1:8 --unit 33554432 --workloads "trace:$T/sort.trc" --policies static,oracle --json
is "$err" "tiersim compare: warning: trace:$T/sort.trc: the fast tier (8192 pages) holds the whole footprint (41 pages), so every policy gives the same AMAT (a smaller --unit or --ratio shows differences)" \
	"the fast tier holds the trace: one warning line"
is "$(echo "$out" | jq '.results[0].amat_ns == .results[1].amat_ns')" true \
	"the fast tier holds the trace: first touch equals the oracle"
# Units of whole pages.
run "$B/tiersim" run --ratio 1:8 --unit 20480 --workload "trace:$T/sort.trc" --policy static --json
is "$rc:$err" "0:" "--unit of five pages: accepted, no warning"
is "$(echo "$out" | jq .fast_tier_pages)" 5 "--unit of five pages: a fast tier of 5 pages"
run "$B/tiersim" run --unit 6000 --workload "trace:$T/sort.trc" --policy static
is "$rc:$err" "2:tiersim run: --unit '6000': expected bytes, a multiple of 4096" \
	"--unit not a multiple of a page: one line"

# Malformed input: program output mixed into valgrind's.
{ printf '==9== Lackey\n L 1000,4\nhello from the program\n S 2000,8\n Q 3000,4\n'; } >"$T/bad.lackey"
run "$B/tiersim" convert --from lackey "$T/bad.lackey" "$T/bad.trc"
is "$rc" 1 "malformed line: exit 1"
is "$err" "tiersim convert: $T/bad.lackey:3: not a lackey line (expected 'I', ' L', ' S', ' M' or '=='): 'hello from the program'" \
	"malformed line: one line naming file and line number"
check "malformed line: no output file left" test ! -e "$T/bad.trc"
run "$B/tiersim" convert --from lackey --skip-bad --json "$T/bad.lackey" "$T/bad.trc"
is "$rc" 0 "--skip-bad: exit 0"
is "$(echo "$out" | jq -c '[.bad_lines, .accesses]')" '[2,2]' "--skip-bad: malformed lines counted and skipped"
run "$B/tiersim" convert --from lackey --skip-bad "$T/bad.lackey" "$T/bad.trc"
like "$out" "2 malformed lines skipped, the first: $T/bad.lackey:3: not a lackey line" \
	"--skip-bad: the summary names the first skipped line"

printf '==9== Lackey\n==9== Exit code: 0\n' >"$T/empty.lackey"
run "$B/tiersim" convert --from lackey "$T/empty.lackey" "$T/empty.trc"
is "$rc:$(lines "$err")" "1:1" "no accesses: exit 1, one line"
like "$err" "no memory accesses found (was valgrind run with --tool=lackey --trace-mem=yes?)" \
	"no accesses: says what to check"

run "$B/tiersim" convert --from lackey "$T/missing.lackey" "$T/x.trc"
is "$rc:$err" "1:tiersim convert: $T/missing.lackey: No such file or directory" "missing input named"
run "$B/tiersim" convert "$SAMPLE" "$T/x.trc"
is "$rc:$err" "2:tiersim convert: --from FORMAT is required (known: lackey)" "--from is required"
run "$B/tiersim" convert --from cachegrind "$SAMPLE" "$T/x.trc"
is "$rc:$err" "2:tiersim convert: unknown input format 'cachegrind' (known: lackey)" "unknown format named"
run "$B/tiersim" convert --from lackey --sample 0 "$SAMPLE" "$T/x.trc"
is "$rc" 2 "--sample 0: usage error"
run "$B/tiersim" convert --from lackey "$SAMPLE"
is "$rc:$(lines "$err")" "2:1" "missing OUT: usage error, one line"

# Damaged traces: one clear line from the reader, through tiersim run.
head -c 100 "$T/sort.trc" >"$T/cut.trc"
run "$B/tiersim" run --machine dram-cxl --workload "trace:$T/cut.trc" --policy static
is "$(lines "$err")" 1 "truncated trace: one line"
like "$err" "$T/cut.trc: truncated at byte 100: the header says the trace is" "truncated trace: file and byte named"
[ "$rc" -ne 0 ]; is $? 0 "truncated trace: non-zero exit"
{ head -c 64 "$T/sort.trc"; printf '\377\377'; tail -c +67 "$T/sort.trc"; } >"$T/corrupt.trc"
run "$B/tiersim" run --machine dram-cxl --workload "trace:$T/corrupt.trc" --policy static
like "$err" "$T/corrupt.trc: record 0 at byte 64:" "corrupt record: record and byte named"
[ "$rc" -ne 0 ]; is $? 0 "corrupt record: non-zero exit"
printf 'TIERTRC\n\002\000' | head -c 64 >"$T/v2.trc"; head -c 54 /dev/zero >>"$T/v2.trc"
run "$B/tiersim" run --machine dram-cxl --workload "trace:$T/v2.trc" --policy static
like "$err" "$T/v2.trc: trace version 2 at byte 8, this build reads version 1" "newer version named"


# A real program, traced here: valgrind lackey of true(1) (about a second),
# converted from a pipe and compared at 1:8, as make bench does with larger
# programs. The per-epoch oracle is a bound: at or below every policy.
if command -v valgrind >/dev/null 2>&1; then
	valgrind --tool=lackey --trace-mem=yes --log-fd=3 true 3>&1 1>/dev/null 2>/dev/null |
		"$B/tiersim" convert --from lackey --json - "$T/true.trc" >"$T/true.json"
	is "$(jq '.accesses > 1000 and .footprint_pages > 8' "$T/true.json")" true \
		"lackey of true: converted from a pipe, accesses and pages"
	run "$B/tiersim" compare --ratio 1:8 --workloads "trace:$T/true.trc" --json
	is "$rc:$err" "0:" "compare of the true trace at 1:8: exit 0, no warning"
	is "$(echo "$out" | jq '[.results[] | .fast_tier_pages < .footprint_pages] | all')" true \
		"true trace: the fast tier holds less than the footprint"
	is "$(echo "$out" | jq '(.results | map(select(.policy == "oracle")) | length) == 1 and
		(.results | length) > 2')" true "true trace: the oracle and every default policy ran"
	is "$(echo "$out" | jq '(.results[] | select(.policy == "oracle").amat_ns) as $o |
		[.results[] | .amat_ns >= $o] | all')" true "true trace: the oracle at or below every policy"
else
	skip "lackey of true" "valgrind is not installed (scripts/install-deps installs it)"
fi

done_testing
