# top.sh - tierctl top against tierd on a simulated machine. On a real
# terminal (a tmux pane): the full-screen view with the tiers' occupancy
# bars, the migration rates and the workload's process line; sort keys mark
# the column sorted by; + slows the refresh; a resize redraws to the new
# width; q, SIGTERM and the daemon going away each end it with the
# terminal put back and the documented exit status. Into a pipe: one status
# block (or JSON line) per refresh. A stopped daemon is waited for. The
# `processes` request behind it.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

MIB=$((1 << 20))
TM="tmux -S $TMP/tmux.sock"
trap '$TM kill-server 2>/dev/null; cleanup' EXIT

wait_socket() { "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1; }
printf 'daemon:\n  interval_ms: 100\npolicy:\n  name: tierd\n' >"$CONF"
start_sim_tierd
check "tierd on sim:dram-cxl answers" until_ok 30 wait_socket

# --- the processes request ------------------------------------------------------
run sh -c "printf '{\"v\":1,\"cmd\":\"processes\"}\n' | socat -t 2 - UNIX-CONNECT:$SOCK"
p=$(echo "$out" | jq -c '.result')
is "$(echo "$p" | jq -c '[.total, .policy, .processes[0].pid]')" "[1,\"tierd\",$PID]" \
	"processes lists the simulated workload (tierd's own pid)"
is "$(echo "$p" | jq '.processes[0] | [.managed_bytes, (.tier_bytes | add)] | .[0] == .[1] and .[0] == '$((128 * MIB))'')" \
	true "its 128 MiB, all of it in some tier"
is "$(echo "$p" | jq '.processes[0] | .hot_bytes > 0 and .hot_bytes < .managed_bytes')" true \
	"part of it hot, part cold"
r=$(printf '{"v":1,"cmd":"processes","args":{"limit":0}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "processes: 'limit' must be an integer in 1..1024" "a bad limit is refused"
r=$(printf '{"v":1,"cmd":"processes","args":{"sort":"cpu"}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "processes: unknown argument 'sort'" "an unknown argument is refused"

# --- into a pipe -------------------------------------------------------------------
run "$B/tierctl" top --socket "$SOCK" --interval 100 --iterations 2
is "$rc" 0 "top into a pipe exits 0 after --iterations"
is "$(printf '%s\n' "$out" | grep -c '^  tier 0 (node 0): ')" 2 "one status block per refresh"
run "$B/tierctl" top --socket "$SOCK" --interval 100 --iterations 2 --json
is "$(printf '%s\n' "$out" | jq -s -c 'map(.tiers | length)')" "[2,2]" "--json: one status object a line"

# --- on a terminal -----------------------------------------------------------------
# The pane runs top and then says how it ended: its exit status, and
# whether the terminal's settings are as before.
cat >"$TMP/top.sh" <<EOS
#!/bin/sh
before=\$(stty -g)
sh -c 'echo \$\$ >"\$1"; exec "\$2" top --socket "\$3" --interval 300' sh "$TMP/top.pid" "$B/tierctl" "$SOCK"
rc=\$?
[ "\$(stty -g)" = "\$before" ] && echo TERMINAL-RESTORED
echo TOP-EXIT=\$rc
sleep 600
EOS
chmod +x "$TMP/top.sh"
screen() { $TM capture-pane -p -t top; }
shows() { screen | grep -q -- "$1"; }
start_top() {
	rm -f "$TMP/top.pid"
	$TM kill-server 2>/dev/null
	# The old server goes asynchronously: a new session must not land in
	# it just before it exits.
	i=0
	while [ -S "$TMP/tmux.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	$TM new-session -d -s top -x 120 -y 30 "$TMP/top.sh"
	until_ok 20 shows "sorted by"
}

check "top draws a full screen in a tmux pane" start_top
s=$(screen)
printf '%s\n' "$s" | sed 's/^/#   /'
like "$(printf '%s\n' "$s" | head -1)" " tierd on sim:dram-cxl   policy tierd   tracker " "a title line: machine, policy, tracker"
check "tier 0 with its bar and share" \
	sh -c "printf '%s\n' \"\$1\" | grep -q '^   0  0 .*32 MiB  *\[#\+\.*\] \+[0-9]\+%'" - "$s"
check "tier 1 with its bar and share" \
	sh -c "printf '%s\n' \"\$1\" | grep -q '^   1  1 .*128 MiB  *\[#\+\.*\] \+[0-9]\+%'" - "$s"
like "$s" "migrations  promoted " "migration rates"
like "$s" "simulated   AMAT " "the simulated application's figures"
check "the workload's process line: pid, name, 128 MiB, a hot/cold bar" \
	sh -c "printf '%s\n' \"\$1\" | grep -q '^ *$PID tierd .* 128 MiB .*\[#\+\.*\]'" - "$s"
like "$s" "*MANAGED" "sorted by managed bytes at first, its column marked"
like "$s" "sorted by managed" "the footer says so"

$TM send-keys -t top c
check "c sorts by CPU" until_ok 5 shows "sorted by cpu"
like "$(screen)" "*CPU%" "the CPU column marked"
check "MANAGED no longer marked" sh -c "! printf '%s\n' \"\$1\" | grep -q '[*]MANAGED'" - "$(screen)"
$TM send-keys -t top h
check "h sorts by hot bytes" until_ok 5 shows "[*]HOT "
$TM send-keys -t top p
check "p sorts by pid" until_ok 5 shows "[*]PID"
$TM send-keys -t top +
check "+ slows the refresh (0.3 s -> 0.6 s)" until_ok 5 shows "refresh 0.6 s"

$TM resize-window -t top -x 90 -y 24
check "a resize redraws to the new width" until_ok 5 shows "sorted by pid"
widest=$(screen | awk '{ if (length($0) > m) m = length($0) } END { print m }')
check "no line wider than 90 columns ($widest)" test "$widest" -le 90
like "$(screen)" "[#" "bars still drawn"

$TM send-keys -t top q
check "q quits" until_ok 10 shows "TOP-EXIT="
like "$(screen)" "TOP-EXIT=0" "with status 0"
like "$(screen)" "TERMINAL-RESTORED" "and the terminal's settings as before"

check "top again" start_top
kill -TERM "$(cat "$TMP/top.pid")"
check "SIGTERM ends it" until_ok 10 shows "TOP-EXIT="
like "$(screen)" "TOP-EXIT=143" "dying of the signal (128 + 15)"
like "$(screen)" "TERMINAL-RESTORED" "the terminal put back first"

check "top once more" start_top
# A stopped daemon is slow, not gone: top waits, says so, and goes on.
kill -STOP "$PID"
check "a daemon that does not answer is marked slow (5 s timeout)" until_ok 20 shows "did not answer within 5000 ms; the figures above are from"
like "$(screen)" "sorted by" "the view stays"
kill -CONT "$PID"
not_slow() { ! shows "retrying"; }
check "and it goes on once the daemon answers again" until_ok 20 not_slow
kill "$PID"
wait "$PID" 2>/dev/null
PID=
check "the daemon gone ends it" until_ok 10 shows "TOP-EXIT="
like "$(screen)" "tierctl top: tierd no longer answers: " "with one line saying so"
like "$(screen)" "TOP-EXIT=1" "and status 1"
like "$(screen)" "TERMINAL-RESTORED" "the terminal put back"

run "$B/tierctl" top --socket "$SOCK"
is "$rc" 1 "no daemon at all: status 1"
like "$err" "tierctl top: " "one line on stderr"
done_testing
