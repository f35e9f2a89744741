# unit.sh - the systemd unit (dist/tierd.service): it parses with no
# warning, runs tierd --restore after any stop, and its sandbox keeps
# systemd-analyze's exposure score at or below the figure reached
# (docs/security.md: 7.4 before the sandbox, 2.1 with it).
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MAX_EXPOSURE=2.1

if ! command -v systemd-analyze >/dev/null; then
	skip "the systemd unit" "systemd-analyze is not installed"
	done_testing
	exit
fi
sed "s|@BINDIR@|$B|g" "$ROOT/dist/tierd.service" >"$TMP/tierd.service"

run systemd-analyze verify --man=no "$TMP/tierd.service"
is "$rc" 0 "systemd-analyze verify accepts the unit"
is "$err" "" "with no warning (an unknown or misspelt option is one)"

key() { sed -n "s/^$1=//p" "$TMP/tierd.service"; }
is "$(key ExecStopPost)" "-$B/tierd --restore" "ExecStopPost puts back what a crashed tierd left"
is "$(key ExecStart)" "$B/tierd --foreground" "ExecStart runs tierd in the foreground"
is "$(key CapabilityBoundingSet)" "CAP_SYS_NICE CAP_SYS_PTRACE CAP_SYS_ADMIN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_IPC_LOCK" \
	"the bounding set is the daemon's own (tests/cli/auth.sh)"
is "$(key ProtectSystem)" strict "ProtectSystem=strict"
is "$(key ProtectKernelTunables)" yes "ProtectKernelTunables=yes"
# Every kernel file tierd writes stays writable under the sandbox.
rw=$(key ReadWritePaths | tr ' ' '\n' | sed 's/^-//')
for p in /proc/sys/kernel/numa_balancing /proc/sys/kernel/numa_balancing_promote_rate_limit_MBps \
	/sys/kernel/mm/numa /sys/kernel/mm/damon \
	/sys/module/damon_stat/parameters /sys/kernel/mm/page_idle /sys/kernel/debug; do
	check "ReadWritePaths holds $p" grep -qx "$p" <<<"$rw"
done
is "$(key RuntimeDirectory)" tierd "RuntimeDirectory=tierd (socket and state file)"
like "$(key SystemCallFilter)" "@system-service" "a system call allow list"

run systemd-analyze security --offline=true --no-pager "$TMP/tierd.service"
score=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for tierd.service: \([0-9.]*\).*/\1/p')
echo "# systemd-analyze security: exposure $score"
check "systemd-analyze security gives a score ($score)" test -n "$score"
check "the exposure is at most $MAX_EXPOSURE (got $score)" \
	awk -v s="${score:-99}" -v m=$MAX_EXPOSURE 'BEGIN { exit !(s <= m) }'
done_testing
