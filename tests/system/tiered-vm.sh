# tiered-vm.sh (system) - the test bed's own contract (docs/tiered-vm.md):
# usage errors exit 2 with one line, a --files script is on the guest's PATH
# with its arguments as given, CMD's stdout and stderr come back apart, its
# exit status propagates, and a timeout ends the guest with status 124.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Usage errors: no guest is booted.
run "$VM" --topology "100:20G 250:xx" -- true
is "$rc:$(lines "$err")" "2:1" "bad --topology entry: status 2, one line"
like "$err" "tiered-vm: bad --topology entry '250:xx'" "bad --topology entry: names the entry"
run "$VM" --nvdimm 300:4G:100 -- true
is "$rc:$(lines "$err")" "2:1" "bad --nvdimm size: status 2, one line"
like "$err" "tiered-vm: bad --nvdimm '300:4G:100': size must be a multiple of 128 MiB" "bad --nvdimm: says why"
run "$VM" --cxl 100 -- true
is "$rc:$(lines "$err")" "2:1" "bad --cxl size: status 2, one line"
: >"$TMP/bzImage"
run "$VM" --nvdimm 300:4G:256 --kernel "$TMP/bzImage" -- true
is "$rc:$(lines "$err")" "2:1" "--nvdimm with --kernel PATH: status 2, one line"
like "$err" "need a Debian suite's kernel" "--nvdimm with --kernel PATH: says why"
run "$VM" --files "$TMP/none.sh" -- true
is "$rc:$err" "2:tiered-vm: --files: no such file: $TMP/none.sh" "missing --files file: status 2, named"
TIERED_VM_SMP=0 run "$VM" -- true
is "$rc:$(lines "$err")" "2:1" "bad TIERED_VM_SMP: status 2, one line"
like "$err" "TIERED_VM_SMP must be a number of CPUs from 1 to 99, not '0'" "bad TIERED_VM_SMP: says why"
run "$VM" --frobnicate -- true
is "$rc:$(lines "$err")" "2:1" "unknown option: status 2, one line"
run "$VM"
is "$rc:$(lines "$err")" "2:1" "no command: status 2, one line"

skip_guest() {
	local d
	for d in "guest ran" "stdout back" "stderr back" "arguments as given" "random pool" "tiers" \
		"timeout status" "timeout message"; do
		skip "$d" "$1"
	done
	done_testing
	exit
}
command -v "${TIERED_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip_guest "QEMU not installed"

# One boot: a --files script that writes to both streams and exits 7.
cat >"$TMP/bed-check.sh" <<'SH'
#!/bin/sh
echo "out: $#"
for a in "$@"; do echo "arg: [$a]"; done
echo "crng: $(dmesg | grep -c 'crng init done')"
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "${t##*/}=$(cat "$t/nodelist")"
done | sort | tr '\n' ' '
echo
echo "err: to stderr" >&2
exit 7
SH
chmod +x "$TMP/bed-check.sh"
start=$(date +%s)
run "$VM" --files "$TMP/bed-check.sh" -- bed-check.sh "a b" '$HOME' ""
secs=$(($(date +%s) - start))
if guest_cannot_fetch "$rc" "$err"; then
	skip_guest "the test bed cannot run here: $(printf '%s\n' "$err" | tail -n 1)"
fi
echo "# boot, command and power-off took $secs s"
is "$rc" 7 "the command's exit status propagates"
is "$(printf '%s\n' "$out" | head -n 1)" "out: 3" "stdout comes back"
is "$err" "err: to stderr" "stderr comes back, apart from stdout"
is "$(printf '%s\n' "$out" | grep '^arg:' | tr '\n' '|')" 'arg: [a b]|arg: [$HOME]|arg: []|' \
	"arguments arrive as given (spaces, \$, empty)"
is "$(printf '%s\n' "$out" | grep '^crng:')" "crng: 1" \
	"the kernel's random pool is ready before the command runs (/init read /dev/urandom)"
is "$(printf '%s\n' "$out" | tail -n 1)" "memory_tier225=2 memory_tier28=1 memory_tier4=0 " \
	"the default guest: three memory tiers, one node each"

# A command that outlives --timeout (boot included): status 124, said so.
run "$VM" --timeout 3 -- sleep 600
is "$rc" 124 "timeout: status 124"
like "$err" "tiered-vm: timeout after 3 s" "timeout: stderr says so"

done_testing
