# crash.sh - crash safety on a real kernel: the tiered guest runs
# tests/system/progs/crash-guest.sh (tierd killed with SIGKILL while it has
# the kernel's tiering switched off and a kdamond running; tierd --restore,
# the unit's ExecStopPost, and the next start put everything back; the
# stale socket does not block the next start). One short boot.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
export TIERED_VM_BUILD_DIR=$B

if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "guest crash-safety tests" "qemu-system-x86_64 is not installed (scripts/install-deps)"
	done_testing
	exit
fi
run "$ROOT/scripts/tiered-vm" --timeout 600 --topology "100:20G:512 250:8G:512 500:2G:512" \
	--files "$B/memhog $ROOT/tests/system/progs/crash-guest.sh $ROOT/tests/system/progs/guest-lib.sh" -- crash-guest.sh
printf '%s\n' "$out" | grep '^#' | sed 's/^/  /'
while IFS= read -r line; do
	case "$line" in
	"ok - "*) _tap_result 0 "${line#ok - }" ;;
	"not ok - "*) _tap_result 1 "${line#not ok - }" ;;
	esac
done <<<"$out"
like "$out" "guest-done" "the guest script ran to its end (status $rc)"
[ -n "$err" ] && printf '%s\n' "$err" | tail -20 | sed 's/^/# guest stderr: /'
done_testing
