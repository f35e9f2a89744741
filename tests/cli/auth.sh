# auth.sh - who may do what with tierd (docs/security.md): an unprivileged
# user may neither advise nor look into another user's process, through
# tierctl, libtier or raw protocol messages, and is told so in one line
# with EPERM; its own processes it may; the socket's directory and the
# socket itself are checked at start; the capabilities the running daemon
# keeps are exactly the documented set. Needs root (to run as another
# user with setpriv and to see the capabilities dropped).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! command -v socat >/dev/null; then
	skip "authorization tests" "need root, setpriv and socat"
	done_testing
	exit
fi

NOBODY=65534
as_nobody() { setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"; }
# raw REQUEST-JSON: one request line as the unprivileged user, the response.
raw() { printf '%s\n' "$1" | as_nobody socat -t 2 - "UNIX-CONNECT:$SOCK"; }

printf 'daemon:\n  interval_ms: 100\n' >"$CONF"
start_sim_tierd
until_ok 30 "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1
check "tierd on sim:dram-cxl answers" kill -0 "$PID"

# A process of root's, one of the unprivileged user's; tierd's own (the
# simulated machine's workload, root's) has placement to read.
sleep 300 &
ROOTPID=$!
setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups sleep 300 &
USERPID=$!
trap 'kill $ROOTPID $USERPID 2>/dev/null; cleanup' EXIT
until_ok 5 test "$(stat -c %u /proc/$USERPID)" = $NOBODY

# --- the socket ------------------------------------------------------------
is "$(stat -c '%U %a %F' "$SOCK")" "root 666 socket" "the socket is root's, mode 0666"

# --- tierctl ---------------------------------------------------------------
# refused VERB ARGS... : tierctl as the unprivileged user, exit 1, one line.
refused() {
	local what=$1 verb=$2
	shift 2
	run as_nobody "$B/tierctl" "$verb" --socket "$SOCK" "$@"
	is "$rc" 1 "tierctl $what of another user's process: exit status 1"
	is "$(lines "$err")" 1 "tierctl $what: one line"
}
refused hint hint $ROOTPID 0x7f0000000000 4K pin-fast
like "$err" "hint: uid $NOBODY may not advise process $ROOTPID (owned by uid 0)" "tierctl hint: EPERM names who and whom"
refused "hint (cold, a move down)" hint "$PID" 0x7f0000000000 4M cold
refused explain explain "$PID" 0x7f0000000000
like "$err" "explain: uid $NOBODY may not inspect process $PID (owned by uid 0)" "tierctl explain: EPERM names who and whom"
refused heatmap heatmap "$PID"
like "$err" "heatmap: uid $NOBODY may not inspect process $PID (owned by uid 0)" "tierctl heatmap: EPERM names who and whom"
run as_nobody "$B/tierctl" heatmap --json --socket "$SOCK" "$PID"
is "$out" "" "heatmap --json of another user's process prints nothing"
run as_nobody "$B/tierctl" reload --socket "$SOCK"
like "$err" "reload: only root may do this (uid $NOBODY)" "tierctl reload: root only"
run as_nobody "$B/tierctl" cgroup set --socket "$SOCK" / --weight 5
like "$err" "cgroup-set: only root may do this (uid $NOBODY)" "tierctl cgroup set: root only"

# Root may look into the workload's placement.
run "$B/tierctl" heatmap --json --socket "$SOCK" "$PID"
is "$rc" 0 "root reads the workload's heatmap"
run "$B/tierctl" explain --json --socket "$SOCK" "$PID" 0x7f0000000000
like "$err" "has no processes" "root's explain gets past the check (the simulated machine has no processes)"

# Its own process the user may advise and look into: the check passes and
# what the simulated machine answers comes back.
run as_nobody "$B/tierctl" hint --socket "$SOCK" $USERPID 0x1000 4K hot
like "$err" "has no processes to advise" "tierctl hint of the user's own process passes the check"
run as_nobody "$B/tierctl" explain --socket "$SOCK" $USERPID 0x1000
like "$err" "has no processes" "tierctl explain of the user's own process passes the check"
run as_nobody "$B/tierctl" heatmap --socket "$SOCK" $USERPID
is "$err" "tierctl heatmap: process $USERPID has no heatmap (not managed by tierd)" \
	"heatmap of the user's own unmanaged process: ESRCH, without the managed pids"
run "$B/tierctl" heatmap --socket "$SOCK" $USERPID
like "$err" "managed: $PID" "root is told which processes are managed"

# --- libtier ----------------------------------------------------------------
run as_nobody env TIERD_SOCKET="$SOCK" "$B/intent_check" advise-pid $ROOTPID 0x7f0000000000 4096 pin-fast
is "$rc" 1 "libtier tier_advise_pid of another user's process fails"
is "$out" "advise-pid: -EPERM (not permitted: only root may advise another user's process)" \
	"with -EPERM and one line"
run as_nobody env TIERD_SOCKET="$SOCK" "$B/intent_check" advise-pid $USERPID 0x7f0000000000 4096 hot
is "$out" "advise-pid: -EOPNOTSUPP (tierd cannot apply advice here (it manages no real processes: a simulated machine))" \
	"libtier: the user's own process passes the check"
run as_nobody "$B/intent_check" query-pid $ROOTPID "0x$(awk -F- 'NR == 1 { print $1 }' /proc/$ROOTPID/maps)" 4096
like "$out" "query-pid: -EPERM" "the kernel refuses the user another user's placement (move_pages status query)"

# --- raw protocol messages --------------------------------------------------
# denied CMD ARGS-JSON MESSAGE
denied() {
	local r
	r=$(raw "{\"v\":1,\"cmd\":\"$1\",\"args\":$2}")
	is "$(echo "$r" | jq -c '[.ok, .errno]')" '[false,1]' "raw $1 of another user's: ok false, errno 1 (EPERM)"
	like "$(echo "$r" | jq -r .error)" "$3" "raw $1: the error says why"
	is "$(lines "$r")" 1 "raw $1: one response line"
}
denied hint "{\"pid\":$ROOTPID,\"addr\":4096,\"len\":4096,\"advice\":\"pin-fast\"}" "uid $NOBODY may not advise process $ROOTPID"
denied explain "{\"pid\":$PID,\"addr\":139637976727552}" "uid $NOBODY may not inspect process $PID"
denied heatmap "{\"pid\":$PID}" "uid $NOBODY may not inspect process $PID"
denied heatmap "{\"pid\":$PID,\"bins\":4,\"slices\":2}" "uid $NOBODY may not inspect process $PID"
denied reload "{}" "reload: only root may do this"
denied cgroup-set '{"path":"db","weight":5}' "cgroup-set: only root may do this"
denied cgroup-set '{"path":"db","clear":true}' "cgroup-set: only root may do this"
# Open to everyone: no per-process placement in them.
for cmd in ping status cgroups; do
	is "$(raw "{\"v\":1,\"cmd\":\"$cmd\"}" | jq .ok)" true "raw $cmd is open to everyone"
done
is "$(raw '{"v":1,"cmd":"status"}' | jq -c '.result | keys - ["machine","tiers","managed_bytes","promoted_bytes","demoted_bytes","failed_moves","processes","huge_pages","split_huge_pages","tracker","policy","version","cpu_seconds","thread_cpu_seconds","kdamond_cpu_seconds","system_cpu_seconds","step_cpu_seconds","move_page_ns","tracker_workload_faults","tracker_workload_fault_seconds","tracker_fault_ns","tracker_fault_ns_seen","tracker_period_ms","tracker_rounds","tracker_dropped","tracker_scan_reads","tracker_restarts","tracker_read_ms","tracker_read_wall_ms","tracker_read_pages","tracker_read_ran_ms","tracker_writer_time","metadata_bytes","heatmap_bytes","uptime_seconds","steps","resumes","steps_without_news","interval_ms","max_cpu_percent","step_cpu_percent","budget_bytes_per_s","amat_ns","fast_access_ratio","figures_age_ms","step_running_ms","rechecked_pages","placement_checks","placement_checks_skipped","refresh_interval_ms","drains","placed_nodes"]')" \
	'[]' "status holds only machine-wide figures (no field names a process)"

check "refusals are logged at notice level" grep -q "notice: refused: hint: uid $NOBODY may not advise process $ROOTPID" "$TMP/log"
check "tierd is still up" kill -0 "$PID"

# --- capabilities ----------------------------------------------------------
# tierd keeps CAP_DAC_OVERRIDE (1), CAP_DAC_READ_SEARCH (2),
# CAP_IPC_LOCK (14), CAP_SYS_PTRACE (19), CAP_SYS_ADMIN (21) and
# CAP_SYS_NICE (23), in its bounding set too; nothing inheritable or ambient.
capof() { awk -v k="$1:" '$1 == k { print $2 }' /proc/"$PID"/status; }
KEEP=0000000000a84006
is "$(capof CapEff)" $KEEP "effective capabilities: dac_override dac_read_search ipc_lock sys_ptrace sys_admin sys_nice"
is "$(capof CapPrm)" $KEEP "permitted: the same"
is "$(capof CapBnd)" $KEEP "bounding set: the same"
is "$(capof CapInh)" 0000000000000000 "nothing inheritable"
is "$(capof CapAmb)" 0000000000000000 "nothing ambient"
if command -v capsh >/dev/null; then
	is "$(capsh --decode=$KEEP)" "0x0000000000a84006=cap_dac_override,cap_dac_read_search,cap_ipc_lock,cap_sys_ptrace,cap_sys_admin,cap_sys_nice" \
		"the mask decodes to the documented names"
else
	skip "the mask decodes to the documented names" "capsh not installed"
fi

kill -TERM "$PID"
wait "$PID"
PID=

# --- the socket's directory, checked at start -------------------------------
# refuse_dir MODE OWNER WHAT: tierd refuses a directory so set, in one
# line, exit 1, and leaves no socket in it.
refuse_dir() {
	local d=$TMP/d
	rm -rf "$d"
	mkdir "$d"
	chmod "$1" "$d"
	chown "$2" "$d"
	run timeout 20 "$B/tierd" --machine sim:dram-cxl --config "$CONF" --socket "$d/tierd.sock" --foreground
	is "$rc" 1 "a socket directory $3: tierd exits 1"
	is "$(lines "$err")" 1 "... with one line"
	check "... and no socket is left" test ! -e "$d/tierd.sock"
}
refuse_dir 0777 root "writable by everyone"
like "$err" "tierd: error: control socket: $TMP/d: writable by every user (mode 0777): refusing to put the socket there" "... which names the directory and its mode"
refuse_dir 1777 root "writable by everyone, sticky"
refuse_dir 0775 root "writable by its group"
like "$err" "writable by its group (mode 0775)" "... which says so"
refuse_dir 0755 $NOBODY "owned by another user"
like "$err" "$TMP/d: owned by uid $NOBODY, neither tierd's (uid 0) nor root's" "... which names the owner"
touch "$TMP/file"
run timeout 20 "$B/tierd" --machine sim:dram-cxl --config "$CONF" --socket "$TMP/file/tierd.sock" --foreground
is "$err" "tierd: error: control socket: $TMP/file: not a directory" "a socket path under a file: one line"
# Made by tierd: root's, 0755.
SOCK=$TMP/new/tierd.sock
start_sim_tierd
until_ok 30 "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1
is "$(stat -c '%U %a' "$TMP/new")" "root 755" "a directory tierd makes is root's, mode 0755"
is "$(stat -c '%U %a %F' "$SOCK")" "root 666 socket" "and the socket in it root's, mode 0666"
kill -TERM "$PID"
wait "$PID"
PID=

done_testing
