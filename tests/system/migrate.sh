# migrate.sh (system) - the Linux address space map, move_pages(2) migrator,
# memory ops and process selection on a real kernel: the three-tier guest
# (scripts/tiered-vm) runs tests/system/progs/migrate-guest.sh, which drives
# memhog workloads with migrate_check:
#   - a hot set placed on node 2 goes to node 0, cold pages on node 1 go to
#     node 2, verified with move_pages status queries;
#   - process selection: RSS filter, exe pattern, cgroup v2 membership as it
#     changes, a removed cgroup;
#   - the workload killed between two batches: pages reported gone;
#   - node 0 full: -ENOMEM reported, pages for other nodes still moved;
#   - transparent huge pages: seen through PAGEMAP_SCAN as aligned blocks of
#     ids, moved whole, split through debugfs, then a page moved alone.
# Each guest check is counted here as one test.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
guest_suite "guest migration tests" 50 "memhog migrate_check" --timeout 400 \
	--files "$B/memhog $B/migrate_check $ROOT/tests/system/progs/migrate-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/migrate-guest.sh
done_testing
