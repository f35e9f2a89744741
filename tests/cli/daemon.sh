# daemon.sh - tierd on a simulated machine: the control socket, status,
# reload (good and bad), SIGHUP, who may do what, shutdown.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

wait_socket() {
	local i
	for i in $(seq 1 300); do
		"$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

promoted() {
	"$B/tierctl" status --socket "$SOCK" --json | jq -e '.promoted_bytes > 0' >/dev/null
}
interval_is() {
	[ "$("$B/tierctl" status --socket "$SOCK" --json | jq '.interval_ms')" = "$1" ]
}

printf 'daemon:\n  interval_ms: 100\npolicy:\n  name: tierd\n' >"$CONF"
start_sim_tierd
check "tierd on sim:dram-cxl answers on its socket" wait_socket

until_ok 30 promoted
run "$B/tierctl" status --socket "$SOCK" --json
is "$rc" 0 "status --json exits 0"
is "$(echo "$out" | jq -c '[has("tiers"), has("promoted_bytes"), has("demoted_bytes"), has("tracker"), has("cpu_seconds")] | all')" true \
	"status has the contract's fields"
is "$(echo "$out" | jq -c '[.tiers[] | [.rank, .nodes]]')" '[[0,[0]],[1,[1]]]' "status lists the machine's tiers"
check "the policy promoted hot pages" test "$(echo "$out" | jq '.promoted_bytes > 0')" = true
check "status gives each tier's free room, within its capacity, tier 0's partly filled ($(echo "$out" | jq -c '[.tiers[] | [.free_bytes, .capacity_bytes]]'))" \
	test "$(echo "$out" | jq '([.tiers[] | has("free_bytes") and .free_bytes <= .capacity_bytes] | all)
		and .tiers[0].free_bytes < .tiers[0].capacity_bytes')" = true
check "the tiers' managed bytes are the managed pages present, in bytes ($(echo "$out" | jq -c '[[.tiers[].managed_bytes], .managed_bytes]'))" \
	test "$(echo "$out" | jq '([.tiers[].managed_bytes] | add) as $t | $t <= .managed_bytes and $t * 2 > .managed_bytes')" = true
is "$(echo "$out" | jq -r '.machine')" sim:dram-cxl "status names the machine"
check "cpu and metadata accounted" test "$(echo "$out" | jq '.cpu_seconds > 0 and .metadata_bytes > 0')" = true
check "status gives tierd's CPU by thread, the step thread's among them, within tierd's ($(echo "$out" | jq -c .thread_cpu_seconds))" \
	test "$(echo "$out" | jq '.thread_cpu_seconds as $t | ($t["tierd-step"] | type) == "number" and
		([$t[]] | add) <= .cpu_seconds + 0.05')" = true
check "tierctl status gives the CPU by thread" \
	grep -Eq '^  by thread: (.*, )?tierd-step [0-9]+\.[0-9]{2} s' <<<"$("$B/tierctl" status --socket "$SOCK")"
check "status gives the model's move cost ($(echo "$out" | jq .move_page_ns) ns a page)" \
	test "$(echo "$out" | jq '.move_page_ns > 0')" = true
is "$(echo "$out" | jq '.interval_ms')" 100 "interval from the config"
run "$B/tierd" --version
is "$rc" 0 "tierd --version exits 0"
version=$out
check "tierd --version names the version or commit ($version)" \
	grep -Eq '^tierd [0-9a-f][0-9a-z.-]*$' <<<"$version"
want=$(git -C "$ROOT" describe --always --dirty 2>/dev/null) &&
	is "$version" "tierd $want" "tierd --version names the commit of this tree (built from it)"
run "$B/tierctl" status --socket "$SOCK" --json
is "tierd $(echo "$out" | jq -r .version)" "$version" "status gives the same version as tierd --version"

run "$B/tierctl" status --socket "$SOCK"
like "$out" "tier 0 (node 0)" "readable status"

# Reload: a good file applies, a bad one is refused and the old one kept.
printf 'daemon:\n  interval_ms: 200\npolicy:\n  name: tierd\n  budget_mb_per_s: 64\n' >"$CONF"
run "$B/tierctl" reload --socket "$SOCK"
is "$rc" 0 "reload of a good file"
run "$B/tierctl" status --socket "$SOCK" --json
is "$(echo "$out" | jq -c '[.interval_ms, .budget_bytes_per_s]')" "[200,$((64 << 20))]" "reloaded values in force"
steps=$(echo "$out" | jq '.steps')

printf 'daemon:\n  interval_ms: 3\n' >"$CONF"
run "$B/tierctl" reload --socket "$SOCK"
is "$rc" 1 "reload of a bad file fails"
like "$err" "daemon.interval_ms: 3 is outside 10..60000" "reload says what is wrong"
printf 'daemon:\n  intervl_ms: 100\n' >"$CONF"
run "$B/tierctl" reload --socket "$SOCK"
like "$err" "tierd.yaml:2:3: daemon: unknown field 'intervl_ms'" "reload names file, line and field"
run "$B/tierctl" status --socket "$SOCK" --json
is "$(echo "$out" | jq '.interval_ms')" 200 "the running configuration is kept"
check "state is kept across reloads (steps go on)" test "$(echo "$out" | jq '.steps')" -ge "$steps"

printf 'daemon:\n  interval_ms: 50\n' >"$CONF"
kill -HUP "$PID"
until_ok 30 interval_is 50
run "$B/tierctl" status --socket "$SOCK" --json
is "$(echo "$out" | jq '.interval_ms')" 50 "SIGHUP reloads"

# The protocol: bad messages get one clear error, the daemon stays up.
r=$(printf 'not json\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" '"ok":false' "garbage is answered with an error"
like "$r" "invalid JSON" "the error says why"
r=$(printf '{"v":1,"cmd":"frobnicate"}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "unknown command 'frobnicate'" "unknown command named"
r=$(printf '{"v":9,"cmd":"status"}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "protocol version 9" "wrong protocol version refused"
r=$(printf '{"v":1,"cmd":"ping"}\n{"v":1,"cmd":"ping"}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
is "$(echo "$r" | grep -c '"ok":true')" 2 "two requests on one connection, two answers"
head -c 70000 /dev/zero | tr '\0' 'x' | socat -t 2 - "UNIX-CONNECT:$SOCK" >"$TMP/big" 2>/dev/null
like "$(cat "$TMP/big")" "too long" "an oversized line is refused"
check "tierd survives bad clients" kill -0 "$PID"

# Who may do what: anyone may read status, only root reloads.
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tierctl" status --socket "$SOCK"
	is "$rc" 0 "an unprivileged user may read status"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tierctl" reload --socket "$SOCK"
	is "$rc" 1 "an unprivileged user may not reload"
	like "$err" "only root may do this (uid 65534)" "EPERM says why"
else
	skip "unprivileged status" "needs root and setpriv"
	skip "unprivileged reload" "needs root and setpriv"
	skip "EPERM message" "needs root and setpriv"
fi

# Hints: who may advise whom, and what a simulated machine says.
run "$B/tierctl" hint --socket "$SOCK" $$ 0x7f0000000000 4M hot
is "$rc" 1 "a hint on the simulated machine fails"
like "$err" "has no processes to advise" "and says why"
run "$B/tierctl" hint --socket "$SOCK" $$ 0x1000 4K sideways
is "$rc" 2 "an unknown advice is a usage error"
like "$err" "unknown advice 'sideways'" "and names it"
run "$B/tierctl" hint --socket "$SOCK" 0 0x1000 4K hot
is "$rc" 2 "pid 0 is a usage error"
run "$B/tierctl" hint --socket "$SOCK" $$ 0x1000 0 hot
is "$rc" 2 "an empty range is a usage error"
r=$(printf '{"v":1,"cmd":"hint","args":{"pid":1,"addr":4096,"len":4096,"advice":"loud"}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "unknown advice 'loud'" "the daemon checks the advice too"
r=$(printf '{"v":1,"cmd":"hint","args":{"pid":"x"}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "'pid' must be a process id" "and the argument types"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tierctl" hint --socket "$SOCK" 1 0x1000 4K hot
	is "$rc" 1 "an unprivileged user may not advise another user's process"
	like "$err" "uid 65534 may not advise process 1 (owned by uid 0)" "EPERM says who and whom"
else
	skip "unprivileged hint" "needs root and setpriv"
	skip "EPERM message for hint" "needs root and setpriv"
fi

# Control groups and explain: a simulated machine has neither; bad input
# is a usage error that names it; cgroup-set is root's.
run "$B/tierctl" cgroup set --socket "$SOCK" db --tier-max 0=128M
is "$rc" 1 "cgroup set on the simulated machine fails"
like "$err" "sim:dram-cxl has no control groups" "and says why"
run "$B/tierctl" cgroup show --socket "$SOCK"
is "$rc" 0 "cgroup show answers"
like "$out" "no control-group rules" "with no rules"
run "$B/tierctl" cgroup set --socket "$SOCK" db --tier-max 0=12Q
is "$rc" 2 "a bad amount is a usage error"
like "$err" "'0=12Q': unknown size suffix" "and names it"
run "$B/tierctl" cgroup set --socket "$SOCK" db --tier-max 9=1M
like "$err" "tier rank must be 0..7" "a bad rank is named"
run "$B/tierctl" cgroup set --socket "$SOCK" db
is "$rc" 2 "cgroup set without a limit is a usage error"
run "$B/tierctl" cgroup frob
like "$err" "unknown action 'frob'" "unknown cgroup action named"
r=$(printf '{"v":1,"cmd":"cgroup-set","args":{"path":"db","tier_max":[7]}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "'tier_max' must be an array of strings" "the daemon checks cgroup-set's types"
r=$(printf '{"v":1,"cmd":"cgroup-set","args":{"path":"db","tier_min":["0=2M"],"tier_max":["0=1M"]}}\n' | socat -t 2 - "UNIX-CONNECT:$SOCK")
like "$r" "min 2M is above max 1M" "and that min is not above max"
run "$B/tierctl" explain --socket "$SOCK" $$ 0x1000
is "$rc" 1 "explain on the simulated machine fails"
like "$err" "has no processes" "and says why"
run "$B/tierctl" explain --socket "$SOCK" 0 0x1000
is "$rc" 2 "explain of pid 0 is a usage error"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tierctl" cgroup set --socket "$SOCK" db --weight 5
	is "$rc" 1 "an unprivileged user may not set a cgroup rule"
	like "$err" "cgroup-set: only root may do this (uid 65534)" "and is told so"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tierctl" explain --socket "$SOCK" 1 0x1000
	like "$err" "uid 65534 may not inspect process 1 (owned by uid 0)" "nor explain another user's process"
else
	skip "unprivileged cgroup set" "needs root and setpriv"
	skip "EPERM message for cgroup set" "needs root and setpriv"
	skip "unprivileged explain" "needs root and setpriv"
fi

# Refusals are logged, at most 10 a minute (a local user cannot flood the
# journal).
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	for _ in $(seq 1 15); do
		setpriv --reuid=65534 --regid=65534 --clear-groups "$B/tierctl" reload --socket "$SOCK" 2>/dev/null
	done
	is "$(grep -c 'notice: refused: ' "$TMP/log")" 10 "refusals logged at most 10 a minute"
else
	skip "refusal log limit" "needs root and setpriv"
fi

# A config with cgroups: checked at load, bad ones named with file and field.
printf 'cgroups:\n  - path: batch\n    tier_max: ["0=128M", "1=50%%"]\n    weight: 50\n' >"$TMP/cg.yaml"
run "$B/tierd" --config "$TMP/cg.yaml" --check
is "$rc" 0 "a cgroups section loads"
like "$out" "batch: tier-max 0=128M tier-max 1=50% weight 50" "and --check shows it"
printf 'cgroups:\n  - path: batch\n    tier_max: ["0=lots"]\n' >"$TMP/cg.yaml"
run "$B/tierd" --config "$TMP/cg.yaml" --check
is "$rc" 1 "a bad amount in the config is refused"
like "$err" "cg.yaml: cgroups[0].tier_max[0]: '0=lots'" "naming file and field"

# One daemon per socket.
run "$B/tierd" --machine sim:dram-cxl --socket "$SOCK" --foreground
is "$rc" 1 "a second tierd on the same socket refuses"
like "$err" "another tierd is running" "and says why"

kill -TERM "$PID"
wait "$PID"
is "$?" 0 "SIGTERM stops tierd with status 0"
PID=
check "the socket is removed" test ! -e "$SOCK"
run "$B/tierctl" status --socket "$SOCK"
is "$rc" 1 "status without a daemon fails"
like "$err" "tierd is not running" "and says so"

# Startup errors.
printf 'policy:\n  name: nope\n' >"$CONF"
run "$B/tierd" --machine sim:dram-cxl --config "$CONF" --socket "$SOCK" --foreground
is "$rc" 1 "unknown policy: tierd exits 1"
like "$err" "unknown policy 'nope'" "and names it"

# The tier override of the configuration is the one the daemon runs with,
# on a simulated machine too (its order here is the reverse of the
# preset's): --check prints it, status shows it.
printf 'topology:\n  tiers:\n    - nodes: [1]\n    - nodes: [0]\n' >"$CONF"
run "$B/tierd" --machine sim:dram-cxl --config "$CONF" --check
like "$out" "tier 0: node 1" "--check ranks as the override says"
start_sim_tierd
until_ok 20 "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1
st=$("$B/tierctl" status --socket "$SOCK" --json)
like "$st" '"tiers":[{"rank":0,"nodes":[1]' "the simulated daemon runs with the override's tiers"
kill -TERM "$PID"
wait "$PID"
PID=

# At log_level debug, a line per step with its CPU by part and the pause.
printf 'daemon:\n  log_level: debug\n' >"$CONF"
start_sim_tierd
until_ok 20 grep -q 'debug: step 2 at ' "$TMP/log"
check "log_level debug: a line per step with when it came, its CPU, waits and blocked time, and its CPU by part" grep -qE \
	'debug: step 2 at [0-9]+\.[0-9]{2} s: [0-9.]+ ms CPU in [0-9.]+ ms \([0-9.]+ waiting for a CPU, [0-9.]+ blocked\) \(tracker [0-9.]+, maps [0-9.]+, placement check [0-9.]+, node query [0-9.]+, moves [0-9.]+ in [0-9.]+; the loop.s step [0-9.]+, heatmaps [0-9.]+, publishing [0-9.]+\); [0-9]+ pages moved \([0-9]+ up, [0-9]+ down\); [0-9]+ steps skipped before it \(no news\); next in [0-9.]+ ms$' "$TMP/log"
kill -TERM "$PID"
wait "$PID"
PID=

# tierd --restore: what a dead tierd left in the state file, and bad input.
run "$B/tierd" --restore --check
is "$rc" 2 "--restore with --check is a usage error"
like "$err" "--restore acts on this host alone" "and says why"
printf 'daemon:\n  state_file: %s/state\n' "$TMP" >"$TMP/restore.yaml"
run "$B/tierd" --config "$TMP/restore.yaml" --restore
is "$rc" 0 "--restore without a state file exits 0"
like "$err" "nothing to put back" "and says there was nothing"
printf 'pid 1\nnuma 2\n' >"$TMP/state"
run "$B/tierd" --config "$TMP/restore.yaml" --restore
is "$rc" 1 "--restore refuses a damaged state file"
like "$err" "state:2: unknown key 'numa'" "naming the file, the line and the key"
check "and keeps it for a look" test -s "$TMP/state"
printf '# a tierd that died having changed nothing yet\npid 1\n' >"$TMP/state"
run "$B/tierd" --config "$TMP/restore.yaml" --restore
is "$rc" 0 "--restore of a state that changed nothing exits 0"
like "$err" "did not exit cleanly; put back what it left changed: nothing was still changed" "and says so"
check "and removes the state file" test ! -e "$TMP/state"

done_testing
