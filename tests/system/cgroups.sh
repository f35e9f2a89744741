# cgroups.sh (system) - control groups' shares of each tier on a real kernel:
# the three-tier guest (scripts/tiered-vm) runs
# tests/system/progs/cgroups-guest.sh: two cgroups compete for node 0 under
# tierd, one capped at 128 MiB of tier 0 by the config (its node-0 bytes stay
# within the cap plus one batch while the other's hot set rises), then a cap
# set with tierctl at run time demotes the other's excess; tierctl cgroup
# show and explain report it; a removed cgroup is survived.
# Each guest check is counted here as one test.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export TIERED_VM_BUILD_DIR=${TIERED_VM_BUILD_DIR:-${TIERD_BUILD:-$ROOT/build}}
B=$TIERED_VM_BUILD_DIR
VM=$ROOT/scripts/tiered-vm
# Checks the guest script makes when everything runs (a crash shows as fewer).
MIN_GUEST_CHECKS=17

skip_all() {
	skip "guest control-group tests" "$1"
	done_testing
	exit
}
[ -x "$VM" ] || skip_all "scripts/tiered-vm not found"
command -v "${TIERED_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip_all "QEMU not installed"
for p in memhog where tierd tierctl; do
	[ -x "$B/$p" ] || skip_all "no $p in $B (run make first)"
done

start=$(date +%s)
JQ=$(command -v jq) || skip_all "jq not installed"
run "$VM" --timeout 500 --files "$B/memhog $B/where $JQ $ROOT/tests/system/progs/cgroups-guest.sh" \
	-- sh /usr/local/bin/cgroups-guest.sh
secs=$(($(date +%s) - start))
if [ "$rc" = 125 ] && printf '%s' "$err" | grep -qE 'fetch|apt-get|no Debian archive|not found'; then
	skip_all "the test bed cannot run here: $(printf '%s' "$err" | tail -n 1)"
fi
is "$rc" 0 "guest ran (tiered-vm status)"
[ "$rc" = 0 ] || printf '%s\n' "$err" | tail -n 20 | sed 's/^/# /'

guest_checks=0
while IFS= read -r line; do
	case "$line" in
	"not ok - "*)
		_tap_result 1 "guest: ${line#not ok - }"
		guest_checks=$((guest_checks + 1))
		;;
	"ok - "*"# SKIP"*)
		desc=${line#ok - }
		skip "guest: ${desc%% # SKIP*}" "${desc#* # SKIP }"
		guest_checks=$((guest_checks + 1))
		;;
	"ok - "*)
		_tap_result 0 "guest: ${line#ok - }"
		guest_checks=$((guest_checks + 1))
		;;
	"#"*) echo "$line" ;;
	esac
done <<EOF
$out
EOF
like "$out" "guest-done" "the guest script ran to its end"
check "the guest made at least $MIN_GUEST_CHECKS checks ($guest_checks)" \
	test "$guest_checks" -ge "$MIN_GUEST_CHECKS"
[ -z "$err" ] || printf '%s\n' "$err" | tail -n 10 | sed 's/^/# stderr: /'
echo "# guest run took $secs s"

done_testing
