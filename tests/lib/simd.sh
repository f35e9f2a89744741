# simd.sh - a tierd on a simulated machine for the command-line tests
# (sourced after tap.sh): the build, a scratch directory with the socket
# and the config, the daemon stopped and the directory removed at exit.
#   start_sim_tierd [ARGS...]   tierd --machine sim:dram-cxl on $SOCK with
#                               $CONF, log in $TMP/log, pid in $PID
#   until_ok SECONDS CMD...     polls CMD every 0.1 s until it succeeds or
#                               SECONDS pass (a loaded machine slows the
#                               daemon; a fixed sleep would be a race)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
TMP=$(mktemp -d)
chmod 755 "$TMP"
SOCK=$TMP/tierd.sock
CONF=$TMP/tierd.yaml
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

start_sim_tierd() {
	"$B/tierd" --machine sim:dram-cxl --config "$CONF" --socket "$SOCK" --foreground "$@" \
		2>"$TMP/log" &
	PID=$!
}

until_ok() {
	local deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}
