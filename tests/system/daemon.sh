# daemon.sh - tierd on a real kernel: the QEMU guest with three memory tiers
# runs tests/system/progs/daemon-guest.sh (workloads with known hot sets,
# kernel tiering on, a workload exiting, a cgroup removed, a hot set of
# transparent huge pages).
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
export TIERED_VM_BUILD_DIR=$B

if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "guest daemon tests" "qemu-system-x86_64 is not installed (scripts/install-deps)"
	done_testing
	exit
fi
# The guest script reads tierctl's JSON with jq (its libraries come along).
JQ=$(command -v jq) || { skip "guest daemon tests" "jq not installed (scripts/install-deps)"; done_testing; exit; }
run "$ROOT/scripts/tiered-vm" --timeout 600 --topology "100:20G:768 250:8G:768 500:2G:768" \
	--files "$B/memhog $B/where $JQ $ROOT/tests/system/progs/daemon-guest.sh $ROOT/tests/system/progs/guest-lib.sh" -- daemon-guest.sh
printf '%s\n' "$out" | grep '^#' | sed 's/^/  /'
n=0
while IFS= read -r line; do
	case "$line" in
	"ok - "*) _tap_result 0 "${line#ok - }" ;;
	"not ok - "*) _tap_result 1 "${line#not ok - }" ;;
	esac
done <<<"$out"
like "$out" "guest-done" "the guest script ran to its end (status $rc)"
[ -n "$err" ] && printf '%s\n' "$err" | tail -20 | sed 's/^/# guest stderr: /'
done_testing
