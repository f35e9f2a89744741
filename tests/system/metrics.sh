# metrics.sh (system) - tierd's Prometheus endpoint on a real kernel: the
# three-tier guest (scripts/tiered-vm) runs
# tests/system/progs/metrics-guest.sh, which scrapes tierd managing a
# memhog in a capped control group and checks the control-group, process,
# move and CPU series the simulated machine of tests/cli/metrics.sh cannot
# show; the scrape comes back here for Debian's python3-prometheus-client
# parser (and promtool where installed). Each guest check is one test here.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
JQ=$(command -v jq) || _guest_skip_all "guest metrics tests" "jq not installed"
guest_suite "guest metrics tests" 13 "memhog tierd tierctl" --timeout 400 \
	--files "$B/memhog $JQ $ROOT/tests/system/progs/metrics-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/metrics-guest.sh

SCRAPE=$(mktemp)
trap 'rm -f "$SCRAPE"' EXIT
printf '%s\n' "$out" | sed -n 's/^scrape| //p' >"$SCRAPE"
run /usr/bin/python3 -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f.type for f in text_string_to_metric_families(open(sys.argv[1]).read()) if f.samples}
print(" ".join(sorted(n for n in fams if n.startswith("tierd_cgroup"))))
' "$SCRAPE"
is "$rc" 0 "prometheus_client's parser accepts the guest's scrape"
is "$out" "tierd_cgroup_managed_bytes tierd_cgroup_max_bytes tierd_cgroup_processes tierd_cgroup_used_bytes tierd_cgroup_weight" \
	"with the control-group families (no min set)"
if command -v promtool >/dev/null; then
	run promtool check metrics <"$SCRAPE"
	is "$rc:$out$err" "0:" "promtool check metrics finds nothing to say"
else
	skip "promtool check metrics" "promtool not installed (Debian package prometheus)"
fi
done_testing
