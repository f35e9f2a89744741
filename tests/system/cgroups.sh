# cgroups.sh (system) - control groups' shares of each tier on a real kernel:
# the three-tier guest (scripts/tiered-vm) runs
# tests/system/progs/cgroups-guest.sh: two cgroups compete for node 0 under
# tierd, one capped at 128 MiB of tier 0 by the config (its node-0 bytes stay
# within the cap plus one batch while the other's hot set rises), then a cap
# set with tierctl at run time demotes the other's excess; tierctl cgroup
# show and explain report it; a removed cgroup is survived.
# Each guest check is counted here as one test.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
# The guest script reads tierctl's JSON with jq (its libraries come along).
JQ=$(command -v jq) || _guest_skip_all "guest control-group tests" "jq not installed"
guest_suite "guest control-group tests" 17 "memhog where tierd tierctl" --timeout 500 \
	--files "$B/memhog $B/where $JQ $ROOT/tests/system/progs/cgroups-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/cgroups-guest.sh
done_testing
