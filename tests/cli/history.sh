# history.sh - tierctl history against tierd on a simulated machine
# (sim:dram-cxl: tiers of 32 MiB and 128 MiB, a 128 MiB workload): the
# `history` request's JSON against status, the table, the PNG (its header
# and size), and bad arguments refused with one clear line.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

MIB=$((1 << 20))
hist() { "$B/tierctl" history --socket "$SOCK" "$@"; }
points_at_least() { [ "$(hist --json --seconds 60 --points 60 2>/dev/null | jq '.points | length')" -ge "$1" ] 2>/dev/null; }
# The points' moves over the hour add up to status's counts (once the
# workload's hot set is in place and the counts hold still for a moment).
moves_add_up() {
	local h s
	h=$(hist --json --points 720) && s=$("$B/tierctl" status --socket "$SOCK" --json) || return 1
	[ "$(echo "$h" | jq '[.points[].promoted_bytes] | add')" = "$(echo "$s" | jq '.promoted_bytes')" ] &&
		[ "$(echo "$h" | jq '[.points[].demoted_bytes] | add')" = "$(echo "$s" | jq '.demoted_bytes')" ]
}

printf 'daemon:\n  interval_ms: 100\npolicy:\n  name: tierd\n' >"$CONF"
start_sim_tierd
check "tierd keeps one sample a second (4 points within 30 s)" until_ok 30 points_at_least 4

# --- JSON against status -------------------------------------------------------
run hist --json --seconds 60 --points 60
is "$rc" 0 "history --json exits 0"
h=$out
st=$("$B/tierctl" status --socket "$SOCK" --json)
is "$(echo "$h" | jq -c '[.sample_ms, .seconds, .step_s]')" "[1000,60,1]" \
	"one-second samples, the window and the points' span as asked"
is "$(echo "$h" | jq -c '[.tiers[] | [.rank, .nodes, .capacity_bytes]]')" \
	"[[0,[0],$((32 * MIB))],[1,[1],$((128 * MIB))]]" "the tiers with their capacities"
is "$(echo "$h" | jq -c '[.tiers[].capacity_bytes]')" "$(echo "$st" | jq -c '[.tiers[].capacity_bytes]')" \
	"the same capacities as status"
is "$(echo "$h" | jq '[.points[] | .tier_bytes | length == 2] | all')" true "each point has bytes per tier"
is "$(echo "$h" | jq '[.points[] | .tier_bytes | add == '$((128 * MIB))'] | all')" true \
	"each point accounts for the whole 128 MiB workload"
is "$(echo "$h" | jq '.points[-1].end_s')" 0 "the newest point ends now"
is "$(echo "$h" | jq '[.points | range(1; length) as $i | .[$i].end_s > .[$i - 1].end_s] | all')" true \
	"points oldest first"
is "$(echo "$h" | jq '[.points[].end_s | . >= -60] | all')" true "all within the window"
t0_hist=$(echo "$h" | jq '.points[-1].tier_bytes[0]')
t0_st=$(echo "$st" | jq '.tiers[0].managed_bytes')
echo "# tier 0: history $t0_hist, status $t0_st"
check "tier 0's bytes match status (within 1 MiB)" \
	test $(( t0_hist > t0_st ? t0_hist - t0_st : t0_st - t0_hist )) -le $MIB
check "tier 0 is full of the workload (over 30 MiB of 32)" test "$t0_hist" -gt $((30 * MIB))
check "the points' promotions and demotions add up to status's counts" until_ok 30 moves_add_up
check "and there were some" test "$(echo "$st" | jq '.promoted_bytes')" -gt 0
run hist --json --seconds 10 --points 5
is "$(echo "$out" | jq -c '[.step_s, (.points | length <= 5)]')" "[2,true]" \
	"10 s in 5 points: 2 s each, at most 5"
run hist --json
is "$(echo "$out" | jq -c '[.seconds, .step_s]')" "[3600,10]" "the hour by default, in points of 10 s"

# --- the table --------------------------------------------------------------------
run hist --seconds 30 --points 6
is "$rc" 0 "history exits 0"
like "$out" "tierd on sim:dram-cxl: the last 30 s" "the table names the machine and the window"
like "$out" "promoted/s" "and its columns"
check "one row per point, at most 6" test "$(printf '%s\n' "$out" | grep -c '^ \+-\?[0-9]\+  ')" -le 6
check "rows of bytes per tier" test "$(printf '%s\n' "$out" | grep -c ' MiB ')" -ge 1

# --- the PNG ----------------------------------------------------------------------
run hist --png "$TMP/h.png" --seconds 120
is "$rc" 0 "history --png exits 0"
is "$(head -c 8 "$TMP/h.png" | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "a PNG file"
is "$(dd if="$TMP/h.png" bs=1 skip=16 count=8 2>/dev/null | od -An -tu1 | tr -s ' ' | sed 's/^ //;s/ $//')" \
	"0 0 3 192 0 0 2 128" "960 x 640 pixels"
check "with something drawn (over 10 KiB)" test "$(stat -c %s "$TMP/h.png")" -gt 10240

# --- bad input ----------------------------------------------------------------------
run hist --png /nonexistent/dir/h.png
is "$rc" 1 "an unwritable --png fails"
is "$err" "tierctl history: --png /nonexistent/dir/h.png: No such file or directory" "and says why"
run hist --seconds 0
is "$rc" 2 "--seconds 0 is a usage error"
is "$err" "tierctl history: --seconds '0': expected 1..3600" "naming the option"
run hist --points 721
is "$err" "tierctl history: --points '721': expected 1..720" "--points out of range"
run hist --json --png x.png
is "$rc" 2 "--json and --png together refused"
r=$(printf '{"v":1,"cmd":"history","args":{"seconds":3601}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "history: 'seconds' must be an integer in 1..3600" "the request's bounds are checked"
r=$(printf '{"v":1,"cmd":"history","args":{"hours":1}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "history: unknown argument 'hours'" "an unknown argument is refused"
run "$B/tierctl" history --socket "$TMP/none.sock"
is "$rc" 1 "no daemon: exit 1"
check "tierd survives" kill -0 "$PID"
done_testing
