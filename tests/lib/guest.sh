# guest.sh - the host side of a guest suite (sourced after tap.sh): runs a
# guest script in the three-tier guest (scripts/tiered-vm) and counts each
# of its "ok - ..." / "not ok - ..." lines as one test here.
#
#   guest_suite LABEL MIN_CHECKS "PROG..." [VM OPTION...] -- GUEST COMMAND...
# LABEL names the suite in a skip; MIN_CHECKS is how many checks the guest
# script makes when everything runs (a crash shows as fewer); PROG are the
# build directory's programs the suite needs (skipped without them). The
# whole suite is skipped where the test bed cannot run (no QEMU, no Debian
# archive for the first kernel download).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export TIERED_VM_BUILD_DIR=${TIERED_VM_BUILD_DIR:-${TIERD_BUILD:-$ROOT/build}}
B=$TIERED_VM_BUILD_DIR
VM=$ROOT/scripts/tiered-vm

_guest_skip_all() { # LABEL REASON
	skip "$1" "$2"
	done_testing
	exit
}

guest_suite() {
	local label=$1 min=$2 progs=$3 p start secs guest_checks=0 line desc
	shift 3
	[ -x "$VM" ] || _guest_skip_all "$label" "scripts/tiered-vm not found"
	command -v "${TIERED_VM_QEMU:-qemu-system-x86_64}" >/dev/null ||
		_guest_skip_all "$label" "QEMU not installed"
	for p in $progs; do
		[ -x "$B/$p" ] || _guest_skip_all "$label" "no $p in $B (run make first)"
	done
	start=$(date +%s)
	run "$VM" "$@"
	secs=$(($(date +%s) - start))
	if [ "$rc" = 125 ] && printf '%s' "$err" | grep -qE 'fetch|apt-get|no Debian archive|not found'; then
		_guest_skip_all "$label" "the test bed cannot run here: $(printf '%s' "$err" | tail -n 1)"
	fi
	is "$rc" 0 "guest ran (tiered-vm status)"
	[ "$rc" = 0 ] || printf '%s\n' "$err" | tail -n 20 | sed 's/^/# /'
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
	done <<GUEST_EOF
$out
GUEST_EOF
	like "$out" "guest-done" "the guest script ran to its end"
	check "the guest made at least $min checks ($guest_checks)" test "$guest_checks" -ge "$min"
	[ -z "$err" ] || printf '%s\n' "$err" | tail -n 10 | sed 's/^/# stderr: /'
	echo "# guest run took $secs s"
}
