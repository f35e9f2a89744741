# testrun.sh - tests/run's counting: a copy of it runs fake TAP programs in
# a scratch tests tree (its cli suite) and must count passes, failures and
# skips, a short plan (the tests that did not run are failures, and the
# message says how many of the planned ones ran) and a crash.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

mkdir -p "$TMP/tests/cli"
cp "$ROOT/tests/run" "$TMP/tests/run"
# fake NAME PLAN EXIT-STATUS [LINE...]: a TAP program in the scratch tree
# printing LINEs, then the plan 1..PLAN (none when empty).
fake() {
	local name=$1 plan=$2 status=$3 line
	shift 3
	{
		for line in "$@"; do printf 'echo %q\n' "$line"; done
		[ -z "$plan" ] || printf 'echo 1..%s\n' "$plan"
		printf 'exit %s\n' "$status"
	} >"$TMP/tests/cli/$name.sh"
}
summary() { # the per-program line of NAME in $out
	printf '%s\n' "$out" | grep "^cli/$1 " | tr -s ' ' | cut -d' ' -f2-
}

fake all 3 0 "ok 1 - a" "ok 2 - b # SKIP not here" "ok 3 - c"
run env TIERD_TEST_SUITES=cli "$TMP/tests/run"
is "$rc" 0 "all passed: tests/run exits 0"
is "$(summary all)" "2 passed, 0 failed, 1 skipped" "passes and skips counted"
is "$(printf '%s\n' "$out" | tail -n 1)" "2 passed, 0 failed, 1 skipped" "the closing line"

fake short 5 0 "ok 1 - a" "not ok 2 - b" "ok 3 - c # SKIP not here"
run env TIERD_TEST_SUITES=cli "$TMP/tests/run"
is "$rc" 1 "a short plan: tests/run exits 1"
is "$(summary short)" "1 passed, 3 failed, 1 skipped" \
	"the planned tests that did not run count as failures"
like "$out" "cli/short: not ok - cli/short ran 3 of 5 planned tests" \
	"the message says how many of the planned tests ran"
rm "$TMP/tests/cli/short.sh"

fake crash "" 3 "ok 1 - a"
run env TIERD_TEST_SUITES=cli "$TMP/tests/run"
is "$rc" 1 "a crash: tests/run exits 1"
is "$(summary crash)" "1 passed, 1 failed, 0 skipped" "a crash counts as one failure"
like "$out" "cli/crash: not ok - cli/crash exited with status 3" "and says so"
is "$(printf '%s\n' "$out" | tail -n 1)" "3 passed, 1 failed, 1 skipped" \
	"the closing line sums the programs"

done_testing
