# badinput.sh - the bad-input survey (docs/bad-input.md): every verb and
# option of tierctl, tiersim and tierd, every configuration field, every
# protocol request, tried with wrong types, out-of-range values, missing
# and extra fields. Each must give exactly one error line naming what is
# wrong and where, the documented exit status (or errno for a request),
# and change nothing: the daemon still answers with the same settings and
# rules.
#   bash tests/cli/badinput.sh [--table FILE]   FILE: the table, Markdown
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

TABLE=
[ "${1:-}" = --table ] && TABLE=$2
: >"$TMP/rows"

# row TOOL INPUT TRIED RESULT: one line of the table.
row() {
	local msg=${4//|/\\|}
	printf '| %s | %s | `%s` | %s |\n' "$1" "$2" "${3//|/\\|}" "$msg" >>"$TMP/rows"
}

# snap: what a bad request must not change: the daemon's settings and its
# control-group rules (and that it answers at all).
snap() {
	{
		"$B/tierctl" status --socket "$SOCK" --json |
			jq -c '[.interval_ms, .max_cpu_percent, .budget_bytes_per_s, .policy, .tracker]'
		"$B/tierctl" cgroup show --socket "$SOCK" --json | jq -c .
	} 2>&1
}

# bad TOOL INPUT STATUS SUBSTRING CMD [ARGS...]: CMD exits STATUS with one
# line on stderr holding SUBSTRING, nothing on stdout, and the daemon's
# snapshot unchanged.
bad() {
	local tool=$1 input=$2 want=$3 sub=$4 before after shown
	shift 4
	before=$(snap)
	run "$@"
	after=$(snap)
	shown="${*#"$B/"}"
	shown=${shown//"$TMP"/\$TMP}
	shown=${shown//"$SOCK"/\$SOCK}
	if [ "$rc" = "$want" ] && [ "$(lines "$err")" = 1 ] && [ -z "$out" ] &&
		[[ "$err" == *"$sub"* ]] && [ "$before" = "$after" ]; then
		_tap_result 0 "$tool $input: $want, one line"
	else
		_tap_result 1 "$tool $input: $want, one line" "command: $shown" "status: $rc (want $want)" \
			"stderr: $err" "stdout: ${out:0:200}" "want in stderr: $sub" \
			"snapshot before: $before" "snapshot after:  $after"
	fi
	row "$tool" "$input" "$shown" "$rc: ${err//"$TMP"/\$TMP}"
}

# req INPUT ERRNO SUBSTRING LINE [FORMAT]: the raw request LINE (sent with
# printf FORMAT, default '%s\n') is answered with one line, ok false, errno
# ERRNO and an error holding SUBSTRING; nothing changed.
req() {
	local input=$1 want=$2 sub=$3 line=$4 fmt=${5:-%s\\n} before after r e
	before=$(snap)
	# shellcheck disable=SC2059
	r=$(printf "$fmt" "$line" | socat -t 2 - "UNIX-CONNECT:$SOCK")
	after=$(snap)
	e=$(printf '%s' "$r" | jq -r '"\(.errno) \(.error)"' 2>/dev/null)
	if [ "$(lines "$r")" = 1 ] && [ "$(printf '%s' "$r" | jq -c '[.ok, .errno]' 2>/dev/null)" = "[false,$want]" ] &&
		[[ "$e" == *"$sub"* ]] && [ "$before" = "$after" ]; then
		_tap_result 0 "request $input: errno $want, one line"
	else
		_tap_result 1 "request $input: errno $want, one line" "sent: ${line:0:200}" "got: ${r:0:300}" \
			"want in error: $sub" "snapshot before: $before" "snapshot after:  $after"
	fi
	row protocol "$input" "${line:0:120}" "errno $e"
}

printf 'daemon:\n  interval_ms: 100\n' >"$CONF"
start_sim_tierd
until_ok 30 "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1
check "tierd on sim:dram-cxl answers" kill -0 "$PID"
S=(--socket "$SOCK")

# --- tierctl ------------------------------------------------------------------
T=$B/tierctl
bad tierctl "no verb" 2 "tierctl: expected a verb" "$T"
bad tierctl "unknown verb" 2 "unknown verb 'frob'" "$T" frob
bad tierctl "status: unknown option" 2 "'--bogus'" "$T" status --bogus
bad tierctl "status: extra argument" 2 "'extra'" "$T" status "${S[@]}" extra
bad tierctl "status: --socket without a value" 2 "--socket" "$T" status --socket
bad tierctl "status: no daemon on --socket" 1 "tierd is not running" "$T" status --socket "$TMP/none.sock"
bad tierctl "status: --socket a relative path (relative to the working directory)" 1 "no daemon at rel.sock" "$T" status --socket rel.sock
bad tierctl "top: --interval not a number" 2 "--interval" "$T" top "${S[@]}" --interval abc
bad tierctl "top: --interval 0" 2 "--interval" "$T" top "${S[@]}" --interval 0
bad tierctl "top: --iterations negative" 2 "--iterations" "$T" top "${S[@]}" --iterations -1
bad tierctl "reload: extra argument" 2 "'now'" "$T" reload "${S[@]}" now
bad tierctl "hint: missing arguments" 2 "expected PID ADDR LEN ADVICE" "$T" hint "${S[@]}" $$ 0x1000
bad tierctl "hint: extra argument" 2 "expected PID ADDR LEN ADVICE" "$T" hint "${S[@]}" $$ 0x1000 4K hot more
bad tierctl "hint: pid not a number" 2 "'abc'" "$T" hint "${S[@]}" abc 0x1000 4K hot
bad tierctl "hint: pid 0" 2 "PID '0' is not a process id" "$T" hint "${S[@]}" 0 0x1000 4K hot
bad tierctl "hint: pid out of range" 2 "99999999999" "$T" hint "${S[@]}" 99999999999 0x1000 4K hot
bad tierctl "hint: addr not a number" 2 "'zz'" "$T" hint "${S[@]}" $$ zz 4K hot
bad tierctl "hint: len 0" 2 "LEN '0' is not a positive size" "$T" hint "${S[@]}" $$ 0x1000 0 hot
bad tierctl "hint: len bad suffix" 2 "'5X'" "$T" hint "${S[@]}" $$ 0x1000 5X hot
bad tierctl "hint: addr + len past 2^64" 2 "runs past the end of the address space" "$T" hint "${S[@]}" $$ 0xffffffffffff0000 1M hot
bad tierctl "hint: unknown advice" 2 "unknown advice 'warm'" "$T" hint "${S[@]}" $$ 0x1000 4K warm
bad tierctl "hint: no such process" 1 "no process 4194304" "$T" hint "${S[@]}" 4194304 0x1000 4K hot
bad tierctl "cgroup: no action" 2 "expected an action, set or show" "$T" cgroup
bad tierctl "cgroup: unknown action" 2 "unknown action 'frob'" "$T" cgroup frob
bad tierctl "cgroup set: no path" 2 "CGROUP" "$T" cgroup set "${S[@]}"
bad tierctl "cgroup set: no limit" 2 "nothing to set" "$T" cgroup set "${S[@]}" db
bad tierctl "cgroup set: bad size" 2 "'0=12Q'" "$T" cgroup set "${S[@]}" db --tier-max 0=12Q
bad tierctl "cgroup set: rank out of range" 2 "tier rank must be 0..7" "$T" cgroup set "${S[@]}" db --tier-max 9=1M
bad tierctl "cgroup set: no '='" 2 "'128M'" "$T" cgroup set "${S[@]}" db --tier-max 128M
bad tierctl "cgroup set: percent over 100" 2 "'0=150%'" "$T" cgroup set "${S[@]}" db --tier-min 0=150%
bad tierctl "cgroup set: weight not a number" 2 "--weight" "$T" cgroup set "${S[@]}" db --weight lots
bad tierctl "cgroup set: weight out of range" 2 "--weight" "$T" cgroup set "${S[@]}" db --weight 20000
bad tierctl "cgroup set: min above max (the daemon checks)" 1 "db: tier 0: min 2M is above max 1M" "$T" cgroup set "${S[@]}" db --tier-max 0=1M --tier-min 0=2M
bad tierctl "cgroup set: a simulated machine" 1 "has no control groups" "$T" cgroup set "${S[@]}" db --weight 5
bad tierctl "cgroup show: extra argument" 2 "'x'" "$T" cgroup show "${S[@]}" x y
bad tierctl "heatmap: no pid" 2 "PID" "$T" heatmap "${S[@]}"
bad tierctl "heatmap: pid not a number" 2 "'abc'" "$T" heatmap "${S[@]}" abc
bad tierctl "heatmap: --bins 0" 2 "--bins" "$T" heatmap "${S[@]}" --bins 0 "$PID"
bad tierctl "heatmap: --bins 300" 2 "--bins" "$T" heatmap "${S[@]}" --bins 300 "$PID"
bad tierctl "heatmap: --slices 61" 2 "--slices" "$T" heatmap "${S[@]}" --slices 61 "$PID"
bad tierctl "heatmap: --start not an address" 2 "--start" "$T" heatmap "${S[@]}" --start zz "$PID"
bad tierctl "heatmap: --end below --start" 2 "--end" "$T" heatmap "${S[@]}" --start 0x2000 --end 0x1000 "$PID"
bad tierctl "heatmap: --png in a missing directory" 1 "$TMP/no/h.png" "$T" heatmap "${S[@]}" --png "$TMP/no/h.png" "$PID"
bad tierctl "heatmap: not managed" 1 "not managed" "$T" heatmap "${S[@]}" $$
bad tierctl "explain: no address" 2 "ADDR" "$T" explain "${S[@]}" "$PID"
bad tierctl "explain: len 0" 2 "LEN" "$T" explain "${S[@]}" "$PID" 0x1000 0
bad tierctl "explain: pid not a number" 2 "'abc'" "$T" explain "${S[@]}" abc 0x1000
bad tierctl "topology: missing sysfs root" 1 "$TMP/nosys" "$T" topology --sysfs-root "$TMP/nosys"
bad tierctl "topology: unknown option" 2 "unrecognized option '--bogus'" "$T" topology --bogus
bad tierctl "topology: bad config" 1 "$CONF.bad" "$T" topology --config "$CONF.bad"
bad tierctl "probe: --repeats 0" 2 "--repeats" "$T" probe --repeats 0
bad tierctl "probe: --repeats 101" 2 "--repeats" "$T" probe --repeats 101
bad tierctl "probe: --buffer-size bad suffix" 2 "--buffer-size" "$T" probe --buffer-size 12Q
bad tierctl "probe: --tolerance not a number" 2 "--tolerance" "$T" probe --tolerance abc
bad tierctl "probe: --nodes reversed range" 2 "--nodes" "$T" probe --nodes 9-1
bad tierctl "probe: --load of a missing file" 1 "$TMP/none.json" "$T" probe --load "$TMP/none.json"
printf '{"nodes": 5}\n' >"$TMP/bad.json"
bad tierctl "probe: --load of a bad file" 1 "$TMP/bad.json" "$T" probe --load "$TMP/bad.json"

# --- tiersim ------------------------------------------------------------------
M=$B/tiersim
bad tiersim "no verb" 2 "tiersim: expected a verb" "$M"
bad tiersim "unknown verb" 2 "'frob'" "$M" frob
bad tiersim "list: extra argument" 2 "'--bogus'" "$M" list --bogus
bad tiersim "run: unknown machine" 2 "'nope'" "$M" run --machine nope --workload gups-hotset --policy tierd
bad tiersim "run: --ratio with a 0" 2 "ratio '1:0': part 2 is zero" "$M" run --machine dram-cxl --ratio 1:0 --workload gups-hotset --policy tierd
bad tiersim "run: --ratio not a ratio" 2 "ratio 'abc'" "$M" run --machine dram-cxl --ratio abc --workload gups-hotset --policy tierd
bad tiersim "run: unknown workload" 2 "'nope'" "$M" run --machine dram-cxl --workload nope --policy tierd
bad tiersim "run: unknown policy" 2 "'nope'" "$M" run --machine dram-cxl --workload gups-hotset --policy nope
bad tiersim "run: --seed not a number" 2 "--seed" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --seed abc
bad tiersim "run: --duration 0" 2 "--duration" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --duration 0
bad tiersim "run: unknown tracker" 2 "'magic'" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --tracker magic
bad tiersim "run: --budget not a number" 2 "--budget" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --budget lots
bad tiersim "run: --unit 0" 2 "--unit" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --unit 0
bad tiersim "run: bad --cgroup" 2 "--cgroup" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --cgroup a,tier-max=9=1M
bad tiersim "run: --timeline in a missing directory" 1 "$TMP/no/t.csv" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --duration 1 --timeline "$TMP/no/t.csv"
bad tiersim "run: missing trace" 2 "$TMP/none.trace" "$M" run --machine dram-cxl --workload "trace:$TMP/none.trace" --policy tierd
bad tiersim "run: missing machine file" 2 "$TMP/none.yaml" "$M" run --machine "file:$TMP/none.yaml" --workload gups-hotset --policy tierd
bad tiersim "run: --app-cores 0" 2 "--app-cores '0': expected 1..4096" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --app-cores 0
bad tiersim "run: --app-cores beyond the machine" 2 "--app-cores 3: the machine 'dram-cxl' has 2 cores" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --app-cores 3
cp "$ROOT/tests/fixtures/machines/dram-cxl-pmem.yaml" "$TMP/pmem.yaml"
{ echo "cpu_slowdown: 0"; cat "$TMP/pmem.yaml"; } >"$TMP/cpu0.yaml"
bad tiersim "run: machine file's cpu_slowdown 0" 2 "cpu0.yaml:1:1: cpu_slowdown: a factor from 0.01 to 1000" "$M" run --machine "file:$TMP/cpu0.yaml" --workload gups-hotset --policy tierd
bad tiersim "run: --max-cpu-percent 0" 2 "--max-cpu-percent '0': expected 1..100" "$M" run --machine dram-cxl --workload gups-hotset --policy tierd --max-cpu-percent 0
bad tiersim "compare: --max-cpu-percent above 100" 2 "--max-cpu-percent '101': expected 1..100" "$M" compare --max-cpu-percent 101
bad tiersim "compare: --app-cores beyond a machine file" 2 "--app-cores 9: the machine 'dram-cxl-pmem' has 4 cores" "$M" compare --machine "file:$TMP/pmem.yaml" --app-cores 9
bad tiersim "compare: unknown workload in the list" 2 "'nope'" "$M" compare --workloads gups-hotset,nope
bad tiersim "compare: unknown policy in the list" 2 "'nope'" "$M" compare --policies tierd,nope
bad tiersim "convert: unknown format" 2 "'pin'" "$M" convert --from pin "$TMP/a" "$TMP/b"
bad tiersim "convert: missing OUT" 2 "expected IN and OUT, got 1 argument" "$M" convert --from lackey "$TMP/a"
bad tiersim "convert: missing IN" 1 "$TMP/none.lackey" "$M" convert --from lackey "$TMP/none.lackey" "$TMP/out.trace"
bad tiersim "convert: --sample 0" 2 "--sample" "$M" convert --from lackey --sample 0 - "$TMP/out.trace"
bad tiersim "topology: unknown machine" 2 "'nope'" "$M" topology --machine nope

# --- tierd's command line -------------------------------------------------------
D=$B/tierd
bad tierd "unknown option" 2 "unrecognized option '--bogus'" "$D" --bogus
bad tierd "extra argument" 2 "unexpected argument 'extra'" "$D" --check extra
bad tierd "--machine without sim:" 2 "--machine 'dram-cxl'" "$D" --machine dram-cxl --check
bad tierd "--machine unknown preset" 1 "'nope'" "$D" --machine sim:nope --check
bad tierd "--config missing" 1 "$TMP/none.yaml" "$D" --config "$TMP/none.yaml" --check
bad tierd "--config a directory" 1 "$TMP" "$D" --config "$TMP" --check
bad tierd "--socket relative" 2 "--socket 'rel.sock'" timeout 20 "$D" --machine sim:dram-cxl --socket rel.sock --foreground
bad tierd "--socket too long" 2 "--socket: longer than 107 bytes" timeout 20 "$D" --machine sim:dram-cxl --socket "/$(printf 'x%.0s' $(seq 1 120))" --foreground
bad tierd "--restore with --machine" 2 "--restore acts on this host alone" "$D" --restore --machine sim:dram-cxl
bad tierd "--workload unknown" 1 "'nope'" timeout 20 "$D" --machine sim:dram-cxl --workload nope --socket "$TMP/w/tierd.sock" --foreground
bad tierd "second daemon on the socket" 1 "another tierd is running" timeout 20 "$D" --machine sim:dram-cxl --config "$CONF" --socket "$SOCK" --foreground

# --- configuration fields (tierd --check; then reload of a running daemon) ------
# cfg INPUT SUBSTRING YAML: tierd --check refuses the file (status 1).
cfg() {
	printf '%b' "$3" >"$CONF.bad"
	bad config "$1" 1 "$2" "$D" --machine sim:dram-cxl --config "$CONF.bad" --check
}
cfg "unknown section" "unknown field 'daemonn'" 'daemonn:\n  interval_ms: 100\n'
cfg "unknown field" "daemon: unknown field 'intervl_ms'" 'daemon:\n  intervl_ms: 100\n'
cfg "YAML syntax" "tierd.yaml.bad:" 'daemon: [\n'
cfg "a section not a map" "daemon" 'daemon: 5\n'
cfg "daemon.interval_ms: wrong type" "interval_ms" 'daemon:\n  interval_ms: fast\n'
cfg "daemon.interval_ms: below range" "daemon.interval_ms: 5 is outside 10..60000" 'daemon:\n  interval_ms: 5\n'
cfg "daemon.interval_ms: negative" "interval_ms" 'daemon:\n  interval_ms: -100\n'
cfg "daemon.interval_ms: past 2^64" "interval_ms" 'daemon:\n  interval_ms: 99999999999999999999999\n'
cfg "daemon.refresh_ms: wrong type" "refresh_ms" 'daemon:\n  refresh_ms: [1]\n'
cfg "daemon.log_level: unknown" "log_level" 'daemon:\n  log_level: loud\n'
cfg "daemon.max_cpu_percent: 0" "max_cpu_percent" 'daemon:\n  max_cpu_percent: 0\n'
cfg "daemon.max_cpu_percent: 1000" "max_cpu_percent" 'daemon:\n  max_cpu_percent: 1000\n'
cfg "daemon.nice: 20" "daemon.nice: 20 is outside -20..19" 'daemon:\n  nice: 20\n'
cfg "daemon.nice: wrong type" "nice" 'daemon:\n  nice: high\n'
cfg "daemon.kernel_tiering: unknown" "kernel_tiering" 'daemon:\n  kernel_tiering: maybe\n'
cfg "daemon.damon_stat: unknown" "damon_stat" 'daemon:\n  damon_stat: maybe\n'
cfg "daemon.socket: relative" "daemon.socket: 'tierd.sock' is not an absolute path" 'daemon:\n  socket: tierd.sock\n'
cfg "daemon.state_file: relative" "daemon.state_file" 'daemon:\n  state_file: state\n'
cfg "topology.sysfs_root: relative" "topology.sysfs_root" 'topology:\n  sysfs_root: sys\n'
cfg "topology.tiers: a node twice" "node 0" 'topology:\n  tiers:\n    - nodes: [0]\n    - nodes: [0, 1]\n'
cfg "topology.tiers: nodes wrong type" "nodes" 'topology:\n  tiers:\n    - nodes: fast\n'
cfg "topology.tiers: unknown field" "unknown field 'node'" 'topology:\n  tiers:\n    - node: [0]\n'
cfg "topology.rank_by: unknown" "rank_by" 'topology:\n  rank_by: fastest\n'
cfg "topology.probe_file: relative" "probe_file" 'topology:\n  probe_file: probe.json\n'
cfg "policy.name: unknown" "policy.name" 'policy:\n  name: nope\n'
# The tracker is the machine's world's to check: at start, not by --check.
printf 'policy:\n  tracker: magic\n' >"$CONF.bad"
bad config "policy.tracker: unknown (at start)" 1 "unknown tracker 'magic'" \
	timeout 20 "$D" --machine sim:dram-cxl --config "$CONF.bad" --socket "$TMP/w/tierd.sock" --foreground
cfg "policy.budget_mb_per_s: wrong type" "budget_mb_per_s" 'policy:\n  budget_mb_per_s: lots\n'
cfg "processes.pids: wrong type" "pids" 'processes:\n  pids: [abc]\n'
cfg "processes.pids: negative" "pids" 'processes:\n  pids: [-1]\n'
cfg "processes.min_rss_mb: negative" "min_rss_mb" 'processes:\n  min_rss_mb: -1\n'
cfg "processes.exe: wrong type" "exe" 'processes:\n  exe: [a]\n'
cfg "processes.cgroups: wrong type" "cgroups" 'processes:\n  cgroups: 5\n'
cfg "cgroups[].path: missing" "path" 'cgroups:\n  - weight: 5\n'
cfg "cgroups[].tier_max: bad rank" "cgroups[0].tier_max[0]" 'cgroups:\n  - path: db\n    tier_max: ["9=1M"]\n'
cfg "cgroups[].tier_min: bad amount" "cgroups[0].tier_min[0]" 'cgroups:\n  - path: db\n    tier_min: ["0=lots"]\n'
cfg "cgroups[].weight: out of range" "weight" 'cgroups:\n  - path: db\n    weight: 20000\n'
cfg "cgroups[]: unknown field" "unknown field 'wieght'" 'cgroups:\n  - path: db\n    wieght: 5\n'
# The same kind of file on reload: refused, the running settings kept.
printf 'daemon:\n  interval_ms: fast\n' >"$CONF.reload"
cp "$CONF" "$CONF.good"
cp "$CONF.reload" "$CONF"
bad config "reload of a file with a wrong type" 1 "interval_ms" "$T" reload "${S[@]}"
printf 'cgroups:\n  - path: db\n    tier_max: ["0=2M"]\n    tier_min: ["0=3M"]\n' >"$CONF"
bad config "reload of a file with min above max" 1 "above" "$T" reload "${S[@]}"
printf 'policy:\n  name: nope\n' >"$CONF"
bad config "reload of a file with an unknown policy" 1 "nope" "$T" reload "${S[@]}"
cp "$CONF.good" "$CONF"

# --- protocol requests ----------------------------------------------------------
req "not JSON" 71 "invalid JSON" 'not json'
req "a JSON array" 71 "not a JSON object" '[1,2]'
req "trailing bytes" 71 "trailing bytes" '{"v":1,"cmd":"ping"} x'
req "missing v" 71 "missing field 'v'" '{"cmd":"ping"}'
req "v a string" 71 "'v' is not an integer" '{"v":"1","cmd":"ping"}'
req "v 2" 71 "protocol version 2" '{"v":2,"cmd":"ping"}'
req "missing cmd" 71 "'cmd'" '{"v":1}'
req "cmd a number" 71 "'cmd'" '{"v":1,"cmd":7}'
req "unknown cmd" 22 "unknown command 'frob'" '{"v":1,"cmd":"frob"}'
req "args an array" 71 "'args' is not an object" '{"v":1,"cmd":"ping","args":[]}'
req "extra top-level field" 71 "unknown field 'id'" '{"v":1,"cmd":"ping","id":3}'
req "ping: extra argument" 22 "ping: unknown argument 'x'" '{"v":1,"cmd":"ping","args":{"x":1}}'
req "status: extra argument" 22 "status: unknown argument 'pid'" '{"v":1,"cmd":"status","args":{"pid":1}}'
req "cgroups: extra argument" 22 "cgroups: unknown argument 'path'" '{"v":1,"cmd":"cgroups","args":{"path":"db"}}'
req "reload: extra argument" 22 "reload: unknown argument 'file'" '{"v":1,"cmd":"reload","args":{"file":"/etc/passwd"}}'
req "hint: missing pid" 22 "hint: 'pid'" '{"v":1,"cmd":"hint","args":{"addr":4096,"len":4096,"advice":"hot"}}'
req "hint: pid a string" 22 "hint: 'pid'" '{"v":1,"cmd":"hint","args":{"pid":"1","addr":4096,"len":4096,"advice":"hot"}}'
req "hint: pid negative" 22 "hint: 'pid'" '{"v":1,"cmd":"hint","args":{"pid":-1,"addr":4096,"len":4096,"advice":"hot"}}'
req "hint: pid past 2^31" 22 "hint: 'pid'" '{"v":1,"cmd":"hint","args":{"pid":4294967296,"addr":4096,"len":4096,"advice":"hot"}}'
req "hint: pid a float" 22 "hint: 'pid'" '{"v":1,"cmd":"hint","args":{"pid":1.5,"addr":4096,"len":4096,"advice":"hot"}}'
req "hint: addr negative" 22 "hint: 'addr'" '{"v":1,"cmd":"hint","args":{"pid":1,"addr":-4096,"len":4096,"advice":"hot"}}'
req "hint: len missing" 22 "'len'" '{"v":1,"cmd":"hint","args":{"pid":1,"addr":4096,"advice":"hot"}}'
req "hint: advice a number" 22 "hint: 'advice' must be a string" '{"v":1,"cmd":"hint","args":{"pid":1,"addr":4096,"len":4096,"advice":1}}'
req "hint: unknown advice" 22 "unknown advice 'loud'" '{"v":1,"cmd":"hint","args":{"pid":1,"addr":4096,"len":4096,"advice":"loud"}}'
req "hint: extra argument" 22 "hint: unknown argument 'node'" '{"v":1,"cmd":"hint","args":{"pid":1,"addr":4096,"len":4096,"advice":"hot","node":0}}'
req "hint: no such process" 3 "no process 4194304" '{"v":1,"cmd":"hint","args":{"pid":4194304,"addr":4096,"len":4096,"advice":"hot"}}'
req "explain: missing addr" 22 "explain: 'addr'" "{\"v\":1,\"cmd\":\"explain\",\"args\":{\"pid\":$PID}}"
req "explain: len a string" 22 "'len'" "{\"v\":1,\"cmd\":\"explain\",\"args\":{\"pid\":$PID,\"addr\":4096,\"len\":\"4K\"}}"
req "explain: extra argument" 22 "explain: unknown argument 'verbose'" "{\"v\":1,\"cmd\":\"explain\",\"args\":{\"pid\":$PID,\"addr\":4096,\"verbose\":true}}"
req "heatmap: missing pid" 22 "heatmap: 'pid'" '{"v":1,"cmd":"heatmap","args":{}}'
req "heatmap: bins 0" 22 "'bins' must be an integer in 1..256" "{\"v\":1,\"cmd\":\"heatmap\",\"args\":{\"pid\":$PID,\"bins\":0}}"
req "heatmap: bins 257" 22 "'bins' must be an integer in 1..256" "{\"v\":1,\"cmd\":\"heatmap\",\"args\":{\"pid\":$PID,\"bins\":257}}"
req "heatmap: slices 61" 22 "'slices' must be an integer in 1..60" "{\"v\":1,\"cmd\":\"heatmap\",\"args\":{\"pid\":$PID,\"slices\":61}}"
req "heatmap: end below start" 22 "'end' must be above 'start'" "{\"v\":1,\"cmd\":\"heatmap\",\"args\":{\"pid\":$PID,\"start\":8192,\"end\":4096}}"
req "heatmap: extra argument" 22 "heatmap: unknown argument 'png'" "{\"v\":1,\"cmd\":\"heatmap\",\"args\":{\"pid\":$PID,\"png\":\"x\"}}"
req "cgroup-set: missing path" 22 "path" '{"v":1,"cmd":"cgroup-set","args":{"weight":5}}'
req "cgroup-set: path a number" 22 "path" '{"v":1,"cmd":"cgroup-set","args":{"path":5,"weight":5}}'
req "cgroup-set: tier_max not an array" 22 "'tier_max' must be an array of strings" '{"v":1,"cmd":"cgroup-set","args":{"path":"db","tier_max":"0=1M"}}'
req "cgroup-set: tier_max of numbers" 22 "'tier_max' must be an array of strings" '{"v":1,"cmd":"cgroup-set","args":{"path":"db","tier_max":[7]}}'
req "cgroup-set: bad amount" 22 "'0=12Q'" '{"v":1,"cmd":"cgroup-set","args":{"path":"db","tier_max":["0=12Q"]}}'
req "cgroup-set: weight negative" 22 "weight" '{"v":1,"cmd":"cgroup-set","args":{"path":"db","weight":-1}}'
req "cgroup-set: weight out of range" 22 "weight" '{"v":1,"cmd":"cgroup-set","args":{"path":"db","weight":20000}}'
req "cgroup-set: clear a string" 22 "clear" '{"v":1,"cmd":"cgroup-set","args":{"path":"db","clear":"yes"}}'
req "cgroup-set: extra argument" 22 "cgroup-set: unknown argument 'tier'" '{"v":1,"cmd":"cgroup-set","args":{"path":"db","weight":5,"tier":0}}'
req "a NUL byte" 71 "NUL" '{"v":1,"cmd":"ping"}' '%s\0\n'
big=$(head -c 70000 /dev/zero | tr '\0' x)
req "a line over 64 KiB" 7 "too long" "$big"
check "tierd survived the survey" kill -0 "$PID"

if [ -n "$TABLE" ]; then
	{
		sed -n '/^<!-- table -->$/q;p' "$TABLE" 2>/dev/null
		echo '<!-- table -->'
		echo '| tool | input | tried | result (exit status or errno: the one line) |'
		echo '|---|---|---|---|'
		cat "$TMP/rows"
	} >"$TMP/table.md"
	cp "$TMP/table.md" "$TABLE"
fi
done_testing
