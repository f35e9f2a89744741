# intent.sh (system) - intent obeyed and authorized on a real kernel: the
# three-tier guest (scripts/tiered-vm, node 0 cut to 128 MiB so that filling
# it is quick) runs tests/system/progs/intent-guest.sh, where tierd manages
# an intent_check workload that fills node 0 with cold pages while a hot set
# larger than node 0's room waits on nodes 1 and 2:
#   - pin-fast (tierctl hint, and tier_advise from the process itself) keeps
#     cold ranges on node 0 and pulls one up from node 2, while the unpinned
#     control range is demoted and the hot set fills the rest of node 0;
#   - a hot range advised cold ends on node 2;
#   - uid 65534 may not advise root's process (tierctl: EPERM message, the
#     daemon logs the refusal; tier_advise_pid: -EPERM; the move_pages
#     query of tier_query: EPERM) but may advise its own, and tierd obeys.
# Placement is checked with move_pages(2) status queries. Each guest check
# is counted here as one test.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
guest_suite "guest intent tests" 42 "intent_check where tierd tierctl" --timeout 170 \
	--topology "100:20G:128 250:8G:256 500:2G:256" \
	--files "$B/intent_check $B/where $ROOT/tests/system/progs/intent-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/intent-guest.sh
done_testing
