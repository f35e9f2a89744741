# integrity.sh (system) - data integrity under migration, the short run:
# the three-tier guest runs tests/system/progs/integrity-guest.sh, where
# integrity_check's workers (anonymous, shared, file-backed private and
# huge-page memory, every page a known pattern; rewritten, forked,
# mremap'ed, unmapped, dropped and freed as they run) go on while tierd
# moves their pages with node 0 full, tierd is killed with SIGKILL and
# started again (three times) and the kernel's tiering runs for one
# stretch; every byte is checked at the end. The long run is `make soak`
# (INTEGRITY_SECONDS, INTEGRITY_MIN_PAGES, INTEGRITY_RESTARTS set its
# length, the pages it must migrate, the restarts).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
SECS=${INTEGRITY_SECONDS:-100}
MIN_PAGES=${INTEGRITY_MIN_PAGES:-10000}
RESTARTS=${INTEGRITY_RESTARTS:-3}
JQ=$(command -v jq) || { skip "guest integrity tests" "jq not installed (scripts/install-deps)"; done_testing; exit; }
guest_suite "guest integrity tests" 14 "tierd tierctl memhog integrity_check" \
	--timeout $((SECS + 240)) \
	--files "$B/memhog $B/integrity_check $JQ $ROOT/tests/system/progs/integrity-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/integrity-guest.sh "$SECS" "$MIN_PAGES" "$RESTARTS"
done_testing
