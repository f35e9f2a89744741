# metrics.sh - tierd's Prometheus endpoint (docs/metrics.md) on a simulated
# three-tier machine: off by default, bad addresses refused with one line
# naming the field, a port in use refused at start; scraped with curl,
# parsed with a real parser (Debian's python3-prometheus-client; promtool
# as well where Debian's prometheus package is installed), names and
# types as the docs list them, figures consistent with tierctl status.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/simd.sh"

# Debian's interpreter, which has Debian's python3-prometheus-client.
PY=/usr/bin/python3
MACHINE=sim:dram-cxl-slow

# A loopback port nothing listens on now.
free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# listening_tcp PID: the TCP ports PID listens on (its socket inodes in
# the LISTEN state of /proc/net/tcp and tcp6), one a line.
listening_tcp() {
	local inodes
	inodes=$(for fd in /proc/"$1"/fd/*; do readlink "$fd"; done 2>/dev/null |
		sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p')
	[ -n "$inodes" ] || return 0
	awk -v inodes=" $(echo $inodes) " \
		'$4 == "0A" && index(inodes, " " $10 " ") { split($2, a, ":"); print a[2] }' \
		/proc/net/tcp /proc/net/tcp6 | while read -r hex; do echo $((16#$hex)); done
}

status_answers() { "$B/tierctl" status --socket "$SOCK" >/dev/null 2>&1; }
wait_socket() { until_ok 30 status_answers; }

# parse FILE: the exposition text through prometheus_client's parser, as
# JSON {"families": {NAME: TYPE}, "samples": [[NAME, {LABELS}, VALUE]]};
# fails (with the parser's message) on text it does not accept. Counter
# families are named as in their TYPE line (the parser drops "_total").
parse() {
	"$PY" - "$1" <<'EOF'
import json, re, sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
typed = dict(re.findall(r'^# TYPE (\S+) (\S+)$', text, re.M))
fams, samples = {}, []
for f in text_string_to_metric_families(text):
    name = f.name + '_total' if f.type == 'counter' and f.name + '_total' in typed else f.name
    fams[name] = f.type
    for s in f.samples:
        samples.append([s.name, s.labels, s.value])
print(json.dumps({'families': fams, 'samples': samples}))
EOF
}

scrape() { # URL FILE: the body into FILE, the headers into FILE.h
	curl -sS --max-time 10 -D "$2.h" -o "$2" "$1"
}

# value JSON NAME [LABEL=VALUE...]: the sum of NAME's samples with those labels.
value() {
	local json=$1 name=$2 sel='true' kv
	shift 2
	for kv in "$@"; do sel="$sel and .[1].${kv%%=*} == \"${kv#*=}\""; done
	echo "$json" | jq "[.samples[] | select(.[0] == \"$name\" and ($sel)) | .[2]] | add // 0 | floor"
}

# --- off by default -------------------------------------------------------

printf 'daemon:\n  interval_ms: 100\n' >"$CONF"
start_sim_tierd --machine "$MACHINE"
check "tierd without daemon.metrics starts" wait_socket
is "$(listening_tcp "$PID")" "" "off by default: tierd listens on no TCP port"
check "and says nothing of metrics" sh -c "! grep -q metrics '$TMP/log'"
kill "$PID"
wait "$PID"
PID=

# --- bad values: one line naming the field --------------------------------

for bad in "localhost:9464" "127.0.0.1" "127.0.0.1:0" "127.0.0.1:70000" "::1:9464" "[::1]9464" "[nope]:9464"; do
	printf 'daemon:\n  metrics: "%s"\n' "$bad" >"$CONF"
	run "$B/tierd" --machine "$MACHINE" --config "$CONF" --check
	is "$rc/$(lines "$err")" "1/1" "daemon.metrics '$bad' is refused with one line"
	like "$err" "tierd.yaml: daemon.metrics: '$bad'" "which names the file, the field and the value"
done
like "$err" "'nope' is not a numeric IPv6 address" "and says what is wrong"
printf 'daemon:\n  metrics: "127.0.0.1:99999"\n' >"$CONF"
run "$B/tierd" --machine "$MACHINE" --config "$CONF" --socket "$SOCK" --foreground
is "$rc" 1 "tierd refuses to start on a bad daemon.metrics"
like "$err" "the port must be a number in 1..65535" "and says why"
run "$B/tierd" --machine "$MACHINE" --metrics nope --socket "$SOCK" --foreground
is "$rc/$(lines "$err")" "2/1" "a bad --metrics is a usage error of one line"
like "$err" "tierd: --metrics 'nope': expected ADDR:PORT" "naming the option"
check "nothing was left running" test ! -e "$SOCK"

# --- the endpoint ---------------------------------------------------------

PORT=$(free_port)
URL=http://127.0.0.1:$PORT/metrics
printf 'daemon:\n  interval_ms: 100\n  metrics: "127.0.0.1:%s"\n' "$PORT" >"$CONF"
start_sim_tierd --machine "$MACHINE"
check "tierd with daemon.metrics starts" wait_socket
is "$(listening_tcp "$PID")" "$PORT" "it listens on the configured port"
like "$(cat "$TMP/log")" "metrics at http://127.0.0.1:$PORT/metrics" "and logs where"
promoted() { "$B/tierctl" status --socket "$SOCK" --json | jq -e '.promoted_bytes > 0 and .demoted_bytes > 0' >/dev/null; }
until_ok 60 promoted

run scrape "$URL" "$TMP/m0"
is "$rc" 0 "curl scrapes /metrics"
like "$(cat "$TMP/m0.h")" "200 OK" "with 200"
like "$(tr -d '\r' <"$TMP/m0.h")" "Content-Type: text/plain; version=0.0.4" "as text format 0.0.4"
run parse "$TMP/m0"
is "$rc" 0 "prometheus_client's parser accepts the text"
[ "$rc" = 0 ] || printf '%s\n' "$err" | sed 's/^/# /'
M0=$out
if command -v promtool >/dev/null; then
	run promtool check metrics <"$TMP/m0"
	is "$rc:$out$err" "0:" "promtool check metrics finds nothing to say"
else
	skip "promtool check metrics" "promtool not installed (Debian package prometheus)"
fi

# Names and types: every family of docs/metrics.md this machine has (a
# simulated one has no control groups and no kdamond of its own).
expected='{"tierd_info":"gauge","tierd_tier_managed_bytes":"gauge","tierd_node_managed_bytes":"gauge",
"tierd_node_capacity_bytes":"gauge","tierd_promoted_pages_total":"counter",
"tierd_promoted_bytes_total":"counter","tierd_demoted_pages_total":"counter",
"tierd_demoted_bytes_total":"counter","tierd_failed_moves_total":"counter",
"tierd_cpu_seconds_total":"counter","tierd_steps_total":"counter",
"tierd_step_failures_total":"counter","tierd_step_duration_seconds":"histogram",
"tierd_managed_processes":"gauge","tierd_metadata_bytes":"gauge",
"tierd_process_managed_bytes":"gauge"}'
is "$(echo "$M0" | jq -cS .families)" "$(echo "$expected" | jq -cS .)" "the families and their types"
missing=
for name in $(echo "$expected" | jq -r 'keys[]') tierd_tracker_cpu_seconds_total \
	tierd_step_cpu_seconds_total tierd_kdamond_cpu_seconds_total tierd_cgroup_processes tierd_cgroup_used_bytes \
	tierd_cgroup_managed_bytes tierd_cgroup_max_bytes tierd_cgroup_min_bytes tierd_cgroup_weight; do
	grep -q "^| \`$name\` " "$ROOT/docs/metrics.md" || missing="$missing $name"
	grep -q "\"$name\"" "$ROOT/src/tierd/metrics.c" || missing="$missing $name(code)"
done
is "$missing" "" "docs/metrics.md lists every family the code has"
is "$(grep -c '^# HELP tierd_' "$TMP/m0")" "$(grep -c '^# TYPE tierd_' "$TMP/m0")" "each family has HELP and TYPE"
is "$(grep '^# TYPE' "$TMP/m0" | awk '$4 == "counter" && $3 !~ /_total$/' | wc -l)" 0 \
	"counters end in _total"
is "$(grep -v '^#' "$TMP/m0" | grep -cv '^tierd_')" 0 "every sample is tierd_"
is "$(echo "$M0" | jq -c '[.samples[] | .[1] | keys[]] | unique')" \
	'["comm","from_tier","le","machine","node","pid","policy","reason","tier","to_tier","tracker"]' \
	"labels as documented"
is "$(echo "$M0" | jq -c '[.samples[] | select(.[0] == "tierd_promoted_pages_total") | [.[1].from_tier, .[1].to_tier]]')" \
	'[["1","0"],["2","0"],["2","1"]]' "promotions by every pair of three tiers"
is "$(echo "$M0" | jq -c '[.samples[] | select(.[0] == "tierd_failed_moves_total") | .[1].reason]')" \
	'["nomem","busy","gone","shared","other"]' "failed moves by every reason"
is "$(echo "$M0" | jq -r '.samples[] | select(.[0] == "tierd_info") | .[1].machine')" "$MACHINE" \
	"tierd_info names the machine"

# Pages and bytes agree, pair by pair (4 KiB pages).
for dir in promoted demoted; do
	is "$(echo "$M0" | jq "[.samples[] | select(.[0] == \"tierd_${dir}_pages_total\") | .[2] * 4096]")" \
		"$(echo "$M0" | jq "[.samples[] | select(.[0] == \"tierd_${dir}_bytes_total\") | .[2]]")" \
		"$dir: bytes are pages times 4 KiB"
done

# The histogram: cumulative buckets up to +Inf, which is _count.
buckets=$(echo "$M0" | jq -c '[.samples[] | select(.[0] == "tierd_step_duration_seconds_bucket") | .[2]]')
is "$(echo "$buckets" | jq '. == (. | sort) and length == 14')" true "14 cumulative buckets"
is "$(echo "$buckets" | jq '.[-1]')" "$(echo "$M0" | jq '[.samples[] | select(.[0] == "tierd_step_duration_seconds_count") | .[2]] | .[0]')" \
	"+Inf equals _count"
is "$(echo "$M0" | jq '[.samples[] | select(.[0] == "tierd_step_duration_seconds_sum") | .[2]] | .[0] > 0')" true \
	"_sum of the step times is positive"
check "_count covers the steps" test "$(value "$M0" tierd_step_duration_seconds_count)" -ge "$(value "$M0" tierd_steps_total)"

# Consistent with tierctl status: counters scraped before status are not
# above it, those rendered after it (steps_total caught up) not below.
S=$("$B/tierctl" status --socket "$SOCK" --json)
caught_up() {
	scrape "$URL" "$TMP/m1" && M1=$(parse "$TMP/m1") &&
		[ "$(value "$M1" tierd_steps_total)" -ge "$(echo "$S" | jq .steps)" ]
}
check "a later scrape has the steps status counted" until_ok 30 caught_up
for dir in promoted demoted; do
	s=$(echo "$S" | jq ".${dir}_bytes")
	check "$dir bytes: the earlier scrape <= status" test "$(value "$M0" tierd_${dir}_bytes_total)" -le "$s"
	check "$dir bytes: status <= the later scrape" test "$s" -le "$(value "$M1" tierd_${dir}_bytes_total)"
done
is "$(value "$M1" tierd_tier_managed_bytes)" "$(echo "$S" | jq '[.tiers[].managed_bytes] | add')" \
	"the tiers hold the managed bytes status counts"
is "$(value "$M1" tierd_node_managed_bytes tier=2)" "$(value "$M1" tierd_tier_managed_bytes tier=2)" \
	"a tier's bytes are its nodes'"
is "$(value "$M1" tierd_process_managed_bytes pid="$PID" comm=tierd)" "$(echo "$S" | jq .managed_bytes)" \
	"the simulated workload shows as tierd's own process"
check "cpu seconds counted" test "$(echo "$M1" | jq '[.samples[] | select(.[0] == "tierd_cpu_seconds_total") | .[2]] | .[0] > 0')" = true

# Other paths and methods; scrapes in parallel while steps run.
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")" 404 "/ is 404"
like "$(curl -s "http://127.0.0.1:$PORT/x")" "metrics are at /metrics" "which says where to look"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x "$URL")" 405 "POST is 405"
is "$(curl -s -o /dev/null -w '%{http_code}' -I "$URL")" 200 "HEAD is 200"
for i in $(seq 1 20); do scrape "$URL" "$TMP/p$i" & done
wait_jobs() { local j; for j in $(jobs -p); do [ "$j" = "$PID" ] || wait "$j"; done; }
wait_jobs
ok=$("$PY" - "$TMP"/p* <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
ok = 0
for name in sys.argv[1:]:
    try:
        fams = list(text_string_to_metric_families(open(name).read()))
        ok += any(f.name == 'tierd_steps' for f in fams)
    except (OSError, ValueError):
        pass
print(ok)
EOF
)
is "$ok" 20 "20 scrapes at once all parse"

# A port in use: a second tierd on it refuses to start, with one line.
run "$B/tierd" --machine "$MACHINE" --socket "$TMP/other.sock" --foreground --metrics "127.0.0.1:$PORT"
is "$rc" 1 "a second tierd on the same port exits 1"
is "$(lines "$err")" 1 "with one line"
like "$err" "metrics endpoint 127.0.0.1:$PORT: Address already in use" "which says why"
check "and leaves no socket behind" test ! -e "$TMP/other.sock"

# Reload: a changed address waits for a restart; the endpoint goes on.
printf 'daemon:\n  interval_ms: 100\n  metrics: "127.0.0.1:1"\n' >"$CONF"
run "$B/tierctl" reload --socket "$SOCK"
is "$rc" 0 "reload with another daemon.metrics succeeds"
like "$(cat "$TMP/log")" "daemon.metrics changes take effect at restart (until then: http://127.0.0.1:$PORT/metrics)" \
	"and says the change waits for a restart"
run scrape "$URL" "$TMP/m2"
is "$rc" 0 "the endpoint still answers"
printf 'daemon:\n  metrics: "127.0.0.1:x"\n' >"$CONF"
run "$B/tierctl" reload --socket "$SOCK"
like "$err" "daemon.metrics: '127.0.0.1:x': the port must be a number" "a bad address is refused at reload"

kill -TERM "$PID"
wait "$PID"
is "$?" 0 "SIGTERM stops tierd with status 0"
PID=
check "the port is closed" sh -c "! curl -s --max-time 2 '$URL' >/dev/null"

# --- exact figures: no step yet (interval 60 s), --metrics on [::1] -------

if "$PY" -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	PORT=$(free_port)
	printf 'daemon:\n  interval_ms: 60000\n  refresh_ms: 60000\n' >"$CONF"
	start_sim_tierd --machine "$MACHINE" --metrics "[::1]:$PORT"
	check "tierd --metrics [::1]:PORT starts" wait_socket
	run scrape "http://[::1]:$PORT/metrics" "$TMP/m3"
	is "$rc" 0 "the IPv6 endpoint answers"
	M3=$(parse "$TMP/m3")
	S=$("$B/tierctl" status --socket "$SOCK" --json)
	is "$(value "$M3" tierd_steps_total)/$(echo "$S" | jq .steps)" "0/0" "no step yet"
	for r in 0 1 2; do
		is "$(value "$M3" tierd_tier_managed_bytes tier=$r)" "$(echo "$S" | jq ".tiers[$r].managed_bytes")" \
			"tier $r: the rendered bytes are status's"
	done
	is "$(value "$M3" tierd_step_duration_seconds_count)" 0 "an empty histogram"
else
	skip "IPv6 endpoint" "no IPv6 loopback here"
fi

done_testing
