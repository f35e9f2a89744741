# bench-guest.sh - the guest tiering benchmark's pieces that run without a
# guest: bench/guest-tiering.sh --render makes the per-run tables and the
# closing lines from a raw guest output written here (figures worked out by
# hand), and refuses bad options with one line; gups's scattered layout
# (and its --hot-list) on this host's node 0 (a few MiB, one second);
# bench/run's check of BENCH_PARTS; bench/guest-ab.sh's medians and bad
# input.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
BENCH=$ROOT/bench/guest-tiering.sh
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# tick T AT RATE HOT0 REST0 KD [TIERD_MOVED TIERD_CPU TIERD_KD STEPS]; the
# updating thread's user and system CPU: $WLU and $WLS
tick() {
	printf 'tick t=%s at=%s rate=%s hot0=%s hot=24576 rest0=%s restn=8704 cold0=4800 coldn=9600 vm_moved=0 vm_migrated=%s kd_cpu=%s wl_user=%s wl_sys=%s' \
		"$1" "$2" "$3" "$4" "$5" "$(($1 * 256))" "$6" "$WLU" "$WLS"
	[ $# -lt 7 ] || printf ' tierd_moved=%s tierd_cpu=%s tierd_kd=%s steps=%s' "$7" "$8" "$9" "${10}"
	echo
}
end() { # REST0
	echo "end t=2 hot0=24576 hot=24576 rest0=$1 rest=139264 cold0=153600 cold=153600 reached90=1"
}
{
	for lay in contiguous scattered; do
		echo "== run $lay/none"
		echo "# numa_balancing=0 demotion_enabled=false"
		WLU=0.95 WLS=0.01 tick 1 1.00 4000000 0 0 0.000
		WLU=1.90 WLS=0.02 tick 2 2.00 4000000 0 0 0.000
		end 0
		echo "== done $lay/none"
		echo "== run $lay/kernel"
		WLU=0.90 WLS=0.05 tick 1 1.00 2000000 12288 10 0.000
		WLU=1.71 WLS=0.10 tick 2 2.00 6000000 24576 20 0.000
		end 5000
		echo "== done $lay/kernel"
		echo "== run $lay/tierd"
		WLU=0.70 WLS=0.10 tick 1 1.00 1000000 24576 1 0.100 0 0.050 0.090 1
		WLU=1.52 WLS=0.16 tick 2 2.00 3000000 24576 1 0.150 100* 0.100 0.090* 1*
		end 100
		echo '# status: {"steps":1}'
		echo "== done $lay/tierd"
	done
} >"$TMP/raw"

run "$BENCH" --render "$TMP/raw" 2
is "$rc" 0 "--render exits 0"
is "$(printf '%s\n' "$out" | tail -5)" "time-to-90%-hot kernel=2.0s tierd=1.0s ratio=2.00
workload-rate tierd/none=0.50 kernel/none=1.00
workload-cpu tierd/none=0.80 kernel/none=0.90
system-cpu tierd=12.5%
cold-promoted kernel=5000 tierd=100" "the closing lines: ratio kernel/tierd, rates and CPU shares over no tiering, tierd + kdamond CPU, cold pages"
like "$out" "# scattered/tierd updating thread CPU: user 1.52 s (76.0%), system 0.16 s (8.0%) of 2.0 s" \
	"each run's updating thread's CPU, user and system"
is "$(printf '%s\n' "$out" | grep -c '^== workload=[a-z]*$')" 2 "one section of closing lines per layout"
like "$out" "
== workload=scattered
time-to-90%-hot" "the scattered layout's lines under their header"
like "$out" "# contiguous/tierd CPU: tierd 0.10 s + kdamond 0.15 s (DAMON sysfs pids; tierd status says 0.09 s) over 2.0 s = 12.5% of one core; 1 steps, first move in the tick ending at 1 s" \
	"the tierd run's CPU, both kdamond figures, steps and first move"
like "$out" "   2    2.0  100.0      16   50.0    3.00     1.0     0.10    0.15     0.09     1*   10.0" \
	"a tick line: cold pages x16, idle share, stale status marked"

run "$BENCH" --render "$TMP/raw" --out "$TMP/table.txt" 2
is "$rc:$out" "0:" "--render --out writes the file only"
is "$(tail -1 "$TMP/table.txt")" "cold-promoted kernel=5000 tierd=100" "the file ends with the last line"

run "$BENCH" --layout diagonal
is "$rc:$(lines "$err")" "2:1" "a bad --layout: status 2, one line"
like "$err" "--layout diagonal: contiguous, scattered" "naming the layout and the choices"
run "$BENCH" --render "$TMP/none" 2
is "$rc:$err" "2:bench-guest: --render $TMP/none: cannot read it" "an unreadable --render file: status 2, one line"
run "$BENCH" --frobnicate
is "$rc:$(lines "$err")" "2:1" "an unknown option: status 2, one line"
run "$BENCH" 1m
is "$rc:$err" "2:bench-guest: SECONDS and SETTLE are whole seconds (got '1m' '0')" "SECONDS not a number: status 2, one line"

if [ -x "$B/gups" ] && [ -d /sys/devices/system/node/node0 ]; then
	run "$B/gups" --array-node 0 --cold-node 0 --array-mib 16 --hot-mib 2 --cold-mib 2 --seconds 1 --layout scattered \
		--hot-list "$TMP/hot"
	is "$rc" 0 "gups --layout scattered runs on node 0"
	# --hot-list: the 512 hot pages' addresses, page-aligned, distinct,
	# ascending, within the array, and not its first 512 pages (scattered)
	arr=$(printf '%s\n' "$out" | sed -n 's/.* array=\(0x[0-9a-f]*\)-\(0x[0-9a-f]*\) .*/\1 \2/p')
	is "$(wc -l <"$TMP/hot" | tr -d ' ')" 512 "--hot-list: one line per hot page"
	while read -r a; do printf '%d\n' "$a"; done <"$TMP/hot" >"$TMP/hot.dec"
	set -- $arr
	is "$(awk -v lo="$(printf '%d' "$1")" -v hi="$(printf '%d' "$2")" \
		'{ v = $1 + 0; if (v % 4096 || v < lo || v >= hi || v <= last) bad++; last = v;
		   if (v >= lo + 512 * 4096) beyond++ }
		END { print bad + 0, (beyond > 0) }' "$TMP/hot.dec")" "0 1" \
		"--hot-list: page-aligned, ascending, within the array, spread past its start"
	like "$out" "layout=scattered" "and says its layout"
	like "$out" "end t=1 hot0=512 hot=512 rest0=3584 rest=3584 cold0=512 cold=512" \
		"512 hot pages and 3584 others, all on node 0"
	like "$out" " kd_cpu=" "the tick line has the kdamonds' CPU"
	# its updating thread's CPU over the second: user time, most of it
	# (at least 0.3 s: a busy host may take some)
	is "$(printf '%s\n' "$out" | sed -n 's/^tick .* wl_user=\([0-9.]*\) wl_sys=\([0-9.]*\).*/\1 \2/p' |
		awk '{ print ($1 >= 0.3 && $1 <= 1.1 && $2 >= 0 && $1 + $2 <= 1.1) }')" 1 \
		"the tick line has the updating thread's user and system CPU, about the second's"
	# --move-at: the hot set moves at that tick (on one node: followed at once)
	run "$B/gups" --array-node 0 --cold-node 0 --array-mib 16 --hot-mib 2 --cold-mib 0 --seconds 2 \
		--move-at 1
	is "$rc" 0 "gups --move-at runs"
	is "$(printf '%s\n' "$out" | grep -E '^(move|tick|end)' | cut -d' ' -f1,2)" "move t=1
tick t=1
tick t=2
end t=2" "gups --move-at: a move line before the tick it happens in"
	like "$out" "reached90=-1 followed90=0" \
		"gups --move-at: the time to follow, the first set's time only before the move"
	run "$B/gups" --array-node 0 --cold-node 0 --array-mib 16 --hot-mib 2 --cold-mib 0 --seconds 2 \
		--move-at 3
	is "$rc:$err" "2:gups: --move-at 3: a second of the run, 1 to --seconds (2)" \
		"gups: a --move-at past the run, one line"
	run "$B/gups" --layout diagonal
	is "$rc:$err" "2:gups: --layout diagonal: contiguous or scattered" "gups: a bad --layout, one line"
	run "$B/gups" --array-node 0 --cold-node 0 --array-mib 16 --hot-mib 2 --cold-mib 0 --seconds 1 \
		--hot-list "$TMP/no/such/dir/hot"
	is "$rc:$err" "1:gups: --hot-list $TMP/no/such/dir/hot: No such file or directory" \
		"gups: a --hot-list it cannot write, one line, status 1"
else
	skip "gups --layout scattered" "no $B/gups or no NUMA node 0 in sysfs"
fi

# make bench PARTS=...: a part bench/run does not know stops it (alone, so that without the check nothing runs)
run env BENCH_PARTS="tput" sh "$ROOT/bench/run"
is "$rc:$err" "2:bench/run: BENCH_PARTS: no part 'tput' (the parts: throughput compare nopmu density steps topology traces)" \
	"make bench PARTS= with an unknown part: status 2, one line naming the parts"
# bench/guest-ab.sh: the medians of two builds' runs from a raw output
# (figures worked out by hand), and its bad input, one line each
AB=$ROOT/bench/guest-ab.sh
{
	echo "# tierd-a: tierd aaaaaaa (/a)"
	echo "# tierd-b: tierd bbbbbbb (/b)"
	for r in "1 3 100 5.0 2.0 1.0 40.5" "2 -1 300 4.0 2.5 1.0 39.6" "3 7 200 6.0 3.0 1.0 41.4"; do
		set -- $r
		echo "RESULT rep=$1 layout=scattered bin=tierd-a reached90=$2 hot0=1 rest0=$3 mupd=$4 tierd_cpu=$5 kd_cpu=$6 steps=4"
		echo "RESULT rep=$1 layout=scattered bin=tierd-b reached90=2 hot0=1 rest0=$(($3 / 10)) mupd=$4 tierd_cpu=1.0 kd_cpu=0.5 steps=4 wl_user=$7 at=45.00"
	done
} >"$TMP/ab.raw"
run "$AB" --seconds 45 --render "$TMP/ab.raw"
is "$rc" 0 "guest-ab --render exits 0"
is "$(printf '%s\n' "$out" | grep '^ab ')" "ab scattered tierd-a (aaaaaaa): time-to-90%-hot median=7s [3 >45 7] cold-promoted median=200 [100 300 200] rate median=5.00 M/s cpu median=3.50 s
ab scattered tierd-b (bbbbbbb): time-to-90%-hot median=2s [2 2 2] cold-promoted median=20 [10 30 20] rate median=5.00 M/s cpu median=1.50 s workload-cpu median=90.0% [90.0 88.0 92.0]" \
	"guest-ab: medians per layout and build, a run that never got there counted as the longest; the workload's CPU share where the runs give it"
# with --move-at, the time to follow the moved hot set too
sed 's/ steps=4$/ steps=4 followed90=4/; s/bin=tierd-b \(.*\)$/bin=tierd-b \1 followed90=-1/' "$TMP/ab.raw" |
	sed '0,/followed90=4/s//followed90=9/' >"$TMP/ab-move.raw"
run "$AB" --seconds 45 --move-at 20 --render "$TMP/ab-move.raw"
is "$(printf '%s\n' "$out" | grep '^ab ' | sed 's/.*time-to-follow/time-to-follow/')" "time-to-follow median=4s [9 4 4]
time-to-follow median=>45s [>45 >45 >45]" "guest-ab --move-at: the time to follow the moved hot set, medians"
run "$AB" --move-at 45 "$B/tierd"
is "$rc:$err" "2:guest-ab: --move-at 45: a second of the run, 1 to --seconds (45)" \
	"guest-ab: a --move-at past the run, one line"
run "$AB" --reps 0 "$B/tierd"
is "$rc:$(lines "$err")" "2:1" "guest-ab: --reps 0: status 2, one line"
run "$AB" --layout diagonal "$B/tierd"
like "$rc:$err" "2:guest-ab: --layout diagonal: contiguous, scattered" "guest-ab: a bad --layout, one line"
run "$AB" "$TMP/no-such-tierd"
is "$rc:$err" "2:guest-ab: $TMP/no-such-tierd: not an executable tierd" "guest-ab: a missing build, one line"
run "$AB"
is "$rc:$(lines "$err")" "2:1" "guest-ab: no build named: status 2, one line"
done_testing
