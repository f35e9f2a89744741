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
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export TIERED_VM_BUILD_DIR=${TIERED_VM_BUILD_DIR:-${TIERD_BUILD:-$ROOT/build}}
B=$TIERED_VM_BUILD_DIR
VM=$ROOT/scripts/tiered-vm
# Checks the guest script makes when everything runs (a crash shows as fewer).
MIN_GUEST_CHECKS=42

skip_all() {
	skip "guest intent tests" "$1"
	done_testing
	exit
}
[ -x "$VM" ] || skip_all "scripts/tiered-vm not found"
command -v "${TIERED_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip_all "QEMU not installed"
for p in intent_check where tierd tierctl; do
	[ -x "$B/$p" ] || skip_all "no $p in $B (run make first)"
done

start=$(date +%s)
run "$VM" --timeout 170 --topology "100:20G:128 250:8G:256 500:2G:256" \
	--files "$B/intent_check $B/where $ROOT/tests/system/progs/intent-guest.sh" \
	-- sh /usr/local/bin/intent-guest.sh
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
