# trackers.sh (system) - the Linux trackers and the kernel-tiering guard in
# the three-tier guest (scripts/tiered-vm, Debian 6.12): tracker_check
# (tests/system/progs/tracker_check.c) runs DAMON and soft-dirty on a
# child that keeps writing a known hot range next to a cold one and on a
# sleeping child at the same addresses, both together (damon+softdirty)
# on a child writing one page in 8 of a range, checks tracker selection (both
# together chosen; idle page tracking and perf sampling unavailable, with reasons)
# and switches numa_balancing 2 -> 0 -> 2. Its TAP lines are re-counted
# here. DAMON samples in guest time, so TCG's slowness costs precision,
# not correctness; the program gives DAMON 12 s.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
PROG=$TIERED_VM_BUILD_DIR/tracker_check

skip_all() {
	skip "trackers in the guest" "$1"
	done_testing
	exit
}
[ -x "$VM" ] || skip_all "scripts/tiered-vm not found"
command -v "${TIERED_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip_all "QEMU not installed"
[ -x "$PROG" ] || skip_all "no tracker_check in $TIERED_VM_BUILD_DIR (run make first)"

# relay TEXT: re-counts the program's "ok"/"not ok" lines; its "# " lines
# after a failure become that failure's diagnostics, the others are shown.
relay() {
	local line status desc diags=() pending=""
	flush() {
		if [ -n "$pending" ]; then
			_tap_result "${pending%%:*}" "${pending#*:}" "${diags[@]}"
			pending="" diags=()
		fi
	}
	while IFS= read -r line; do
		case "$line" in
		"ok "*" - "*) flush; pending="0:${line#* - }" ;;
		"not ok "*" - "*) flush; pending="1:${line#* - }" ;;
		"# "*)
			if [ "${pending%%:*}" = 1 ]; then diags+=("${line#\# }")
			else echo "$line"; fi ;;
		1..*) ;;
		*) [ -n "$line" ] && echo "# guest: $line" ;;
		esac
	done <<<"$1"
	flush
}

start=$(date +%s)
run "$VM" --timeout 240 --files "$PROG" -- tracker_check 12
secs=$(($(date +%s) - start))
if guest_cannot_fetch "$rc" "$err"; then
	skip_all "the test bed cannot run here: $(printf '%s\n' "$err" | tail -n 1)"
fi
relay "$out"
is "$rc" 0 "tracker_check exits 0 in the guest ($secs s)"
[ "$rc" = 0 ] || printf '%s\n' "$err" | tail -n 20 | sed 's/^/# /'
plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9]*\)$/\1/p')
check "tracker_check ran all its checks (plan ${plan:-missing})" test -n "$plan"

done_testing
