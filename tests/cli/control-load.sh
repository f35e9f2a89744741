# control-load.sh - tierd's control socket under load, on a simulated
# machine: 60 concurrent clients (load_check clients: well-behaved, slow
# readers of 300 pipelined answers, half-written and abandoned requests,
# oversized lines, malformed messages) for a few seconds. Every client
# gets whole answers or a clean close, the policy keeps stepping, tierd's
# memory stays bounded, the log stays quiet. The guest runs the same with
# 1000 managed processes (tests/system/load.sh, make load).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

[ -x "$B/load_check" ] || { skip "control socket under load" "no load_check in $B (run make first)"; done_testing; exit; }
steps() { "$B/tierctl" status --socket "$SOCK" --json | jq '.steps'; }
answers() { "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1; }

printf 'daemon:\n  interval_ms: 100\n  state_file: %s/state\n' "$TMP" >"$CONF"
start_sim_tierd
check "tierd on sim:dram-cxl answers" until_ok 30 answers
steps0=$(steps)
run "$B/load_check" clients 60 --socket "$SOCK" --seconds 4
echo "# $out"
printf '%s\n' "$err" | head -n 5 | sed 's/^/# /'
is "$rc" 0 "every client got whole answers or a clean close"
like "$out" "failures=0" "no torn line, reset or silence"
check "the slow readers and the rest were answered (answers > 100)" \
	test "$(echo "$out" | sed -n 's/.* answers=\([0-9]*\).*/\1/p')" -gt 100
check "status still answers" answers
steps1=$(steps)
check "the policy kept stepping ($steps0 -> $steps1)" test "$steps1" -gt "$steps0"
hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$PID/status)
echo "# tierd VmHWM $hwm kB"
check "tierd's memory stayed bounded (VmHWM $hwm kB < 64 MiB)" test "$hwm" -lt 65536
lines=$(wc -l <"$TMP/log")
check "no log storm ($lines lines)" test "$lines" -le 10
done_testing
