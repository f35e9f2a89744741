# guest.sh - the host side of a guest suite (sourced after tap.sh): runs a
# guest script in the three-tier guest (scripts/tiered-vm) and counts each
# of its "ok - ..." / "not ok - ..." lines as one test here.
#
#   guest_suite LABEL MIN_CHECKS "PROG..." [VM OPTION...] -- GUEST COMMAND...
# LABEL names the suite in a skip; MIN_CHECKS is how many checks the guest
# script makes when everything runs (a crash shows as fewer); PROG are the
# build directory's programs the suite needs (skipped without them). The
# whole suite is skipped where the test bed cannot run (no QEMU, no kernel:
# see guest_cannot_fetch); any other failure of the test bed, a guest
# kernel's panic among them, fails.
#
#   guest_cannot_fetch RC STDERR
# true when tiered-vm ended with its test-bed status (125) because it could
# not fetch the guest kernel: its last line on stderr then starts
# "tiered-vm: cannot fetch a kernel: ". A crashed guest's status is 125 too,
# followed by the console's last lines, whatever they say.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export TIERED_VM_BUILD_DIR=${TIERED_VM_BUILD_DIR:-${TIERD_BUILD:-$ROOT/build}}
B=$TIERED_VM_BUILD_DIR
VM=$ROOT/scripts/tiered-vm

guest_cannot_fetch() {
	[ "$1" = 125 ] || return 1
	case "$(printf '%s\n' "$2" | tail -n 1)" in
	"tiered-vm: cannot fetch a kernel: "*) return 0 ;;
	*) return 1 ;;
	esac
}

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
	if guest_cannot_fetch "$rc" "$err"; then
		_guest_skip_all "$label" "the test bed cannot run here: $(printf '%s\n' "$err" | tail -n 1)"
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
