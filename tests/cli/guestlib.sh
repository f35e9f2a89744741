# guestlib.sh - tests/lib/guest.sh's verdict on a failed test bed, with
# scripts/tiered-vm replaced by a fake (its VM variable) or kept without a
# kernel to fetch: only a kernel that cannot be fetched skips a guest
# suite; a guest that crashed fails it, whatever its console said.
. "$(dirname "$0")/../lib/tap.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# A guest suite of one check, run with the tiered-vm given as $1; QEMU is
# "installed" (TIERED_VM_QEMU=true) so that the suite gets to run it.
cat >"$TMP/suite.sh" <<SH
. "$ROOT/tests/lib/tap.sh"
. "$ROOT/tests/lib/guest.sh"
VM=\$1
guest_suite "fake suite" 1 "" -- true
done_testing
SH

# What tiered-vm leaves on stderr when the guest kernel panics: the console
# tail, here with a "not found" in it (after a first run's fetch).
cat >"$TMP/crash-vm" <<'SH'
#!/bin/sh
cat >&2 <<'CONSOLE'
tiered-vm: fetching the Debian sid kernel (once; cached in /tmp/cache/kernels/sid)
tiered-vm: the guest ended without reporting a status (kernel panic or crash?)
tiered-vm: last lines of the guest console:
  | /init: line 12: memhog: not found
  | Kernel panic - not syncing: Attempted to kill init! exitcode=0x00007f00
  | ---[ end Kernel panic - not syncing: Attempted to kill init! exitcode=0x00007f00 ]---
CONSOLE
exit 125
SH
chmod +x "$TMP/crash-vm"

run env TIERED_VM_QEMU=true bash "$TMP/suite.sh" "$TMP/crash-vm"
is "$rc" 1 "a guest kernel panic fails the suite"
is "$(printf '%s\n' "$out" | grep -c '# SKIP')" 0 "and is not a skip"
like "$out" "not ok 1 - guest ran (tiered-vm status)" "the guest's status is the failure"
like "$out" "# stderr:   | Kernel panic - not syncing" "shown with the console's tail"

# The real tiered-vm with no Debian archive to fetch the kernel from.
run env TIERED_VM_QEMU=true TIERED_VM_CACHE="$TMP/cache" TIERED_VM_KERNEL=nosuchsuite \
	TIERED_VM_APT_URI="file://$TMP/no-archive" bash "$TMP/suite.sh" "$ROOT/scripts/tiered-vm"
is "$rc" 0 "a kernel that cannot be fetched skips the suite"
like "$out" "ok 1 - fake suite # SKIP the test bed cannot run here: tiered-vm: cannot fetch a kernel: " \
	"and says why"

# The verdict itself: the status and the last line both count.
. "$ROOT/tests/lib/guest.sh"
fails() { ! "$@"; }
fetch_err="tiered-vm: cannot fetch a kernel: apt-get update failed for suite 'sid'"
check "status 125 with the fetch failure last: cannot fetch" guest_cannot_fetch 125 "$fetch_err"
check "another status: not a fetch failure" fails guest_cannot_fetch 1 "$fetch_err"
check "the same words in the console's tail: not a fetch failure" \
	fails guest_cannot_fetch 125 "$(printf 'tiered-vm: last lines of the guest console:\n  | %s' "$fetch_err")"

done_testing
