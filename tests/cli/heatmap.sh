# heatmap.sh - tierctl heatmap against tierd on a simulated machine: the
# workload (gups-hotset: a hot set at a third of its 128 MiB takes 90% of
# the accesses) shows as tierd's own pid; its hot range reads hotter than
# the rest in the JSON, on the terminal and in a PNG; bad arguments get one
# clear line and a non-zero status.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

hm() { "$B/tierctl" heatmap --socket "$SOCK" "$@"; }
slices_at_least() { # N: the heatmap has N ended slices
	[ "$(hm --json "$PID" 2>/dev/null | jq '.slices | length')" -ge "$1" ] 2>/dev/null
}

# The simulated process's pages start at 0x7f0000000000: 128 MiB, the hot
# set [42.7 MiB, 55.5 MiB). Windows well inside each part:
BASE=$((0x7f0000000000))
MIB=$((1 << 20))
HOT_START=$((BASE + 44 * MIB)) HOT_END=$((BASE + 54 * MIB))
COLD_START=$((BASE + 64 * MIB))

printf 'daemon:\n  interval_ms: 100\npolicy:\n  name: tierd\n' >"$CONF"
start_sim_tierd
check "tierd on sim:dram-cxl keeps a heatmap of its workload (3 slices within 30 s)" \
	until_ok 30 slices_at_least 3

# --- the data -----------------------------------------------------------------
run hm --json "$PID"
is "$rc" 0 "heatmap --json exits 0"
is "$(echo "$out" | jq -c '[.pid, .unit, .slice_ms, .page_bytes]')" \
	"[$PID,\"accesses/s per page\",1000,4096]" "names the process, the unit and the resolution"
is "$(echo "$out" | jq -c '.ranges')" '[{"start":"0x7f0000000000","end":"0x7f0008000000"}]' \
	"covers the simulated process's range"
is "$(echo "$out" | jq '.bins | length')" 32 "32 bins by default"
is "$(echo "$out" | jq '.bin_bytes')" $((4 * MIB)) "of 4 MiB each"
is "$(echo "$out" | jq '(.slices | length) as $n | [.bins[].rates | length == $n] | all')" true \
	"a rate per bin and slice"
is "$(echo "$out" | jq '[.slices[] | (.end_s - .start_s - 1) | fabs < 1e-6] | all')" true "slices of one second"
is "$(echo "$out" | jq '.slices[-1].end_s <= 0 and .slices[0].start_s < .slices[-1].start_s')" true \
	"slices in the past, oldest first"
is "$(echo "$out" | jq '[.bins[].tier] | map(select(. == 0 or . == 1)) | length')" 32 \
	"each bin names the tier of its pages"

mean() { # START [END]: the mean rate of one bin over [START, END)
	hm --json --bins 1 --start "$1" ${2:+--end "$2"} "$PID" | jq '.bins[0].mean_rate'
}
hot=$(mean $HOT_START $HOT_END)
cold=$(mean $COLD_START)
echo "# hot range $hot, cold range $cold accesses/s per page"
holds() { jq -en "$@" >/dev/null; }
check "the hot range is accessed (> 100/s per page)" holds "$hot > 100"
check "the cold range is accessed too, less (> 0)" holds "$cold > 0"
check "the hot range reads at least 10 times hotter than the cold one" holds "$hot > 10 * $cold"
run hm --json --bins 1 --start $HOT_START --end $HOT_END "$PID"
check "the hot range is hotter than the cold one in every slice" \
	holds --argjson r "$(echo "$out" | jq -c '.bins[0].rates')" "[\$r[] | . > 10 * $cold] | all"
is "$(echo "$out" | jq -c '[.bin_bytes, .bins[0].start, .bins[0].end]')" \
	"[$((10 * MIB)),\"$(printf '0x%x' $HOT_START)\",\"$(printf '0x%x' $HOT_END)\"]" \
	"--start/--end choose the window"
hot_tier0() { [ "$(hm --json --bins 1 --start $HOT_START --end $HOT_END "$PID" | jq '.bins[0].tier')" = 0 ]; }
check "the hot range's pages sit in tier 0 (promoted)" until_ok 30 hot_tier0
run hm --json --bins 256 --slices 2 "$PID"
is "$(echo "$out" | jq -c '[(.bins | length), (.slices | length), .bin_bytes]')" "[256,2,$((MIB / 2))]" \
	"--bins and --slices choose the resolution"

# --- on a terminal -----------------------------------------------------------
run hm "$PID"
is "$rc" 0 "heatmap exits 0"
like "$out" "process $PID, tracker " "names the process and the tracker"
like "$out" "128 MiB managed in 1 range shown, 32 bins of 4 MiB" "says what the rows are"
like "$out" "scale, accesses/s per page (log): ' ' <" "prints the scale"
is "$(printf '%s\n' "$out" | grep -c '^0x7f[0-9a-f]\{10\} \+t[01] \+|[ .:=+*#%@-]\+| [0-9]')" 32 \
	"one row per bin: address, tier, intensities"
hot_row=$(printf '%s\n' "$out" | grep '^0x7f0003000000 ')
cold_row=$(printf '%s\n' "$out" | grep '^0x7f0006000000 ')
echo "# $hot_row"
echo "# $cold_row"
like "$hot_row" "@" "a hot row shows the top intensity"
check "a cold row does not" test "${cold_row#*@}" = "$cold_row"
like "$hot_row" " t0 " "and the hot row's pages are in tier 0"

# --- PNG -----------------------------------------------------------------------
run hm --png "$TMP/h.png" "$PID"
is "$rc" 0 "--png exits 0"
like "$out" "written to $TMP/h.png" "and says where it wrote"
is "$(head -c 8 "$TMP/h.png" | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a "the file is a PNG (signature)"
is "$(dd if="$TMP/h.png" bs=1 skip=12 count=4 2>/dev/null)" IHDR "with its header chunk"
w=$((0x$(dd if="$TMP/h.png" bs=1 skip=16 count=4 2>/dev/null | od -An -tx1 | tr -d ' \n')))
h=$((0x$(dd if="$TMP/h.png" bs=1 skip=20 count=4 2>/dev/null | od -An -tx1 | tr -d ' \n')))
echo "# PNG ${w}x${h}, $(stat -c %s "$TMP/h.png") bytes"
check "of a readable size (${w}x${h})" test "$w" -ge 600 -a "$h" -ge 400 -a "$w" -le 4000 -a "$h" -le 4000
check "with content (> 5 KiB)" test "$(stat -c %s "$TMP/h.png")" -gt 5120
run hm --png "$TMP/j.png" --json "$PID"
check "--png with --json writes the file and prints the data" \
	test -s "$TMP/j.png" -a "$(echo "$out" | jq '.pid')" = "$PID"

# --- errors ----------------------------------------------------------------------
run hm
is "$rc" 2 "no PID: usage error"
like "$err" "tierctl heatmap: expected one PID" "and says so"
run hm abc
is "$rc" 2 "a non-numeric PID: usage error"
like "$err" "tierctl heatmap: PID 'abc' is not a process id" "and names it"
run hm 12x
like "$err" "PID '12x' is not a process id" "trailing garbage too"
run hm $$
is "$rc" 1 "a process tierd does not manage fails"
is "$err" "tierctl heatmap: process $$ is not managed by tierd (managed: $PID)" \
	"one line: which process, and which are managed"
gone=4194000
while [ -e /proc/$gone ]; do gone=$((gone + 1)); done
run hm $gone
is "$rc" 1 "a process that does not exist fails"
like "$err" "no process $gone" "and says so"
run hm --png /nonexistent-dir/h.png "$PID"
is "$rc" 1 "an unwritable PNG path fails"
is "$err" "tierctl heatmap: --png /nonexistent-dir/h.png: No such file or directory" \
	"one line naming the file and why"
check "no file left behind" test ! -e /nonexistent-dir/h.png
run hm --bins 0 "$PID"
is "$rc" 2 "--bins 0: usage error"
like "$err" "--bins '0': expected 1..256" "names the limits"
run hm --slices 61 "$PID"
like "$err" "--slices '61': expected 1..60" "--slices beyond the history"
run hm --start 0x2000 --end 0x1000 "$PID"
like "$err" "--end must be above --start" "an empty window"
run hm --start 0x1000 --end 0x2000 "$PID"
is "$rc" 1 "a window with no managed memory fails"
like "$err" "process $PID has no managed memory in [0x1000, 0x2000)" "and says so"
run "$B/tierctl" heatmap --socket "$TMP/none.sock" "$PID"
is "$rc" 1 "no daemon: fails"
like "$err" "tierd is not running" "and says so"
r=$(printf '{"v":1,"cmd":"heatmap","args":{"pid":%d,"bins":0}}\n' "$PID" | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "'bins' must be an integer in 1..256" "the daemon checks the bins"
r=$(printf '{"v":1,"cmd":"heatmap","args":{"pid":%d,"bin":3}}\n' "$PID" | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "heatmap: unknown argument 'bin'" "and refuses an unknown argument"
r=$(printf '{"v":1,"cmd":"heatmap","args":{}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "'pid' must be a process id" "and needs a pid"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tierctl" heatmap --socket "$SOCK" "$PID"
	is "$rc" 1 "an unprivileged user may not see root's process's heatmap"
	like "$err" "uid 65534 may not inspect process $PID (owned by uid 0)" "and is told so"
else
	skip "unprivileged heatmap" "needs root and setpriv"
	skip "EPERM message for heatmap" "needs root and setpriv"
fi
run "$B/tierctl" heatmap --help
is "$rc" 0 "heatmap --help exits 0"
like "$out" "usage: tierctl heatmap" "and prints the usage"
run "$B/tierctl" --help
like "$out" "heatmap" "tierctl --help lists the verb"
run "$B/tierctl" status --socket "$SOCK" --json
check "status counts the heatmaps' memory" test "$(echo "$out" | jq '.heatmap_bytes > 60000')" = true

kill -TERM "$PID"
wait "$PID"
is "$?" 0 "tierd stops cleanly"
PID=
done_testing
