# load.sh (system) - tierd under load, the short run: in the three-tier
# guest (tests/system/progs/load-guest.sh) tierd manages 1000 small
# processes while 100 concurrent control clients (slow readers,
# half-written, abandoned, oversized and malformed requests) talk to it:
# every client gets whole answers or a clean close, the policy keeps
# stepping, tierd's memory stays bounded (printed), the log stays quiet.
# The long run is `make load` (LOAD_PROCS, LOAD_CLIENTS, LOAD_SECONDS,
# LOAD_TRACKER: soft-dirty by default, see load-guest.sh for DAMON).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
PROCS=${LOAD_PROCS:-1000}
CLIENTS=${LOAD_CLIENTS:-100}
SECS=${LOAD_SECONDS:-20}
TRACKER=${LOAD_TRACKER:-softdirty}
JQ=$(command -v jq) || { skip "guest load tests" "jq not installed (scripts/install-deps)"; done_testing; exit; }
guest_suite "guest load tests" 12 "tierd tierctl load_check" \
	--timeout $((SECS + 600)) \
	--files "$B/load_check $JQ $ROOT/tests/system/progs/load-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/load-guest.sh "$PROCS" "$CLIENTS" "$SECS" "$TRACKER"
done_testing
