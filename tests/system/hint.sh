# hint.sh (system) - the hint-fault tracker on a real kernel: the tiered
# guest (scripts/tiered-vm) runs tests/system/progs/hint-guest.sh, where
# tierd with tracker damon+hint sets the kernel's NUMA balancing to take
# hint faults and move nothing (numa_balancing 2, promotion rate limit 0,
# demotion off), reads them through perf's software page-fault event,
# brings a hot set on node 2 to node 0, and puts the three settings back at
# exit and, after SIGKILL, with tierd --restore. Each guest check is
# counted here as one test.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
# The guest script reads tierctl's JSON with jq (its libraries come along).
JQ=$(command -v jq) || _guest_skip_all "guest hint-fault tracker tests" "jq not installed"
guest_suite "guest hint-fault tracker tests" 17 "memhog where tierd tierctl" --timeout 200 \
	--files "$B/memhog $B/where $JQ $ROOT/tests/system/progs/hint-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/hint-guest.sh
done_testing
