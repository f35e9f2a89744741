# tlb.sh (system) - how much of a hot page set the kernel's accessed-bit
# trackers see in the guest, on the test bed's stock kernel and on its
# hardware-like one (scripts/build-guest-kernel: the TLB entry is flushed
# when an accessed bit is cleared). tlb_check (tests/system/progs/
# tlb_check.c) keeps touching 64 and 4096 pages in a loop and reads DAMON's
# nr_accesses for them (the maximum, 20, is every 5 ms sample of a 100 ms
# window seeing an access) and, where the kernel has it, idle page tracking.
#
# Under QEMU TCG the software TLB keeps an entry whose accessed bit the
# kernel cleared, and x86 does not flush there: on the stock kernel DAMON
# sees a looping page set as (nearly) cold. That figure is the test bed's
# artifact, printed and not asserted. On the hardware-like kernel the set
# must be seen at >= 80% of the maximum. Both kernels: the cold set is
# seen cold.
#
#   TIERED_VM_KERNEL  the stock kernel (default: the test bed's, Linux 6.12);
#                     the hardware-like one is then hwtlb, or SUITE-hwtlb
#                     for another suite; a *hwtlb kernel alone runs alone
#   TLB_HW_KERNEL     the hardware-like kernel to compare with ("" for none)
#   TLB_SECONDS       measuring time per page set and tracker (default 4)
#   TLB_BUILD_KERNEL  1: build the hardware-like kernel when it is not cached
#                     (default: skip that half, saying how to build it)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
PROG=$TIERED_VM_BUILD_DIR/tlb_check
SECS=${TLB_SECONDS:-4}
HW_MIN_PCT=80

skip_all() {
	skip "accessed bits in the guest" "$1"
	done_testing
	exit
}
[ -x "$VM" ] || skip_all "scripts/tiered-vm not found"
command -v "${TIERED_VM_QEMU:-qemu-system-x86_64}" >/dev/null || skip_all "QEMU not installed"
[ -x "$PROG" ] || skip_all "no tlb_check in $TIERED_VM_BUILD_DIR (run make first)"

stock=${TIERED_VM_KERNEL:-}
case $stock in
hwtlb | *?-hwtlb) hw=$stock stock="" ;;
"") hw=${TLB_HW_KERNEL-hwtlb} ;;
*) hw=${TLB_HW_KERNEL-$stock-hwtlb} ;;
esac

# The hardware-like kernel is built from Debian's source (scripts/
# build-guest-kernel: an hour on a busy 2-core machine): this test uses
# it where it is cached (make guest-kernel) and skips that half otherwise,
# saying so, unless TLB_BUILD_KERNEL=1 lets tiered-vm build it here.
if [ -n "$hw" ] && [ "${TLB_BUILD_KERNEL:-0}" != 1 ]; then
	cache=${TIERED_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tierd/tiered-vm}
	if [ ! -s "$cache/kernels/$hw/vmlinuz" ]; then
		skip "the hardware-like kernel $hw" "not built yet: make guest-kernel KERNEL=$hw (or TLB_BUILD_KERNEL=1)"
		hw=""
		[ -n "$stock" ] || [ -z "${TIERED_VM_KERNEL:-}" ] || skip_all "no kernel to measure"
	fi
fi

declare -A fig=()	# fig[LABEL/TRACKER/PAGES] = "hot_pct cold_pct"

# measure LABEL KERNEL: runs tlb_check on KERNEL ("" for the test bed's
# default), re-counts its checks under LABEL and keeps its figures. Returns
# 1 when the kernel cannot be fetched or built here (a skip).
measure() {
	local label=$1 kernel=$2 start secs line tr pages hot cold vmk=()
	[ -z "$kernel" ] || vmk=(--kernel "$kernel")
	start=$(date +%s)
	run "$VM" "${vmk[@]}" --timeout 300 --files "$PROG" -- tlb_check "$SECS"
	secs=$(($(date +%s) - start))
	if guest_cannot_fetch "$rc" "$err"; then
		skip "$label kernel: accessed bits" \
			"the test bed cannot run it here: $(printf '%s\n' "$err" | tail -n 1)"
		return 1
	fi
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*)
			line=${line#ok * - }
			skip "$label: ${line%% # SKIP*}" "${line#* # SKIP }" ;;
		"ok "*" - "*) _tap_result 0 "$label: ${line#ok * - }" ;;
		"not ok "*" - "*) _tap_result 1 "$label: ${line#not ok * - }" ;;
		"tlb-kernel "*) echo "# $label kernel: Linux ${line#tlb-kernel }" ;;
		"tlb-figure "*)
			tr=${line#* tracker=} tr=${tr%% *}
			pages=${line#* pages=} pages=${pages%% *}
			hot=${line#* hot_pct=} hot=${hot%% *}
			cold=${line#* cold_pct=} cold=${cold%% *}
			fig[$label/$tr/$pages]="$hot $cold" ;;
		"# "*) echo "# $label: ${line#\# }" ;;
		esac
	done <<<"$out"
	is "$rc" 0 "$label: tlb_check exits 0 in the guest ($secs s)"
	[ "$rc" = 0 ] || printf '%s\n' "$err" | tail -n 20 | sed 's/^/# /'
	check "$label: tlb_check ran to its plan" grep -qE '^1\.\.[0-9]+$' <<<"$out"
}

labels=()
if [ -n "$stock" ] || [ -z "$hw" ]; then
	if measure stock "$stock"; then labels+=(stock); fi
fi
if [ -n "$hw" ]; then
	if measure "$hw" "$hw"; then labels+=("$hw"); fi
fi

# The hardware-like kernel sees the looping set at nearly every sample.
if [ -n "$hw" ] && [[ " ${labels[*]} " == *" $hw "* ]]; then
	for key in "$hw/damon/64" "$hw/damon/4096" "$hw/idle/64" "$hw/idle/4096"; do
		v=${fig[$key]:-}
		if [ -z "$v" ]; then
			_tap_result 1 "$key: a figure was printed"
			continue
		fi
		hot=${v%% *}
		check "$key: the looping set is seen at ${hot}% of the maximum (>= $HW_MIN_PCT%)" \
			awk -v h="$hot" -v m="$HW_MIN_PCT" 'BEGIN { exit !(h >= m) }'
	done
fi

# Side by side: hot set seen, in % of the maximum (cold set in brackets).
if ((${#labels[@]})); then
	hdr=$(printf '%-7s %6s' tracker pages)
	for l in "${labels[@]}"; do hdr+=$(printf ' %22s' "$l"); done
	echo "# accessed-bit trackers on a looping page set: hot % of max (cold %)"
	echo "# $hdr"
	for tr in damon idle; do
		for pages in 64 4096; do
			row=$(printf '%-7s %6s' "$tr" "$pages")
			for l in "${labels[@]}"; do
				v=${fig[$l/$tr/$pages]:-}
				if [ -n "$v" ]; then
					row+=$(printf ' %22s' "${v%% *}% (${v#* }%)")
				else
					row+=$(printf ' %22s' "-")
				fi
			done
			echo "# $row"
		done
	done
fi

done_testing
