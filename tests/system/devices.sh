# devices.sh (system) - memory devices as tiered nodes on a real kernel:
# the guest has nodes 0 and 1 and an emulated NVDIMM whose memory becomes
# node 2 (scripts/tiered-vm --nvdimm); tests/system/progs/devices-guest.sh
# onlines its devdax namespace with tierctl into a new tier, has a
# workload's cold pages demoted onto it, drains and offlines it (move_pages
# status before and after, checksums of the data), and checks that bad
# input is refused with one line and nothing changed. Each guest check is
# counted here as one test.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/guest.sh"
guest_suite "guest device tests" 30 "keeper where" --timeout 400 \
	--topology "100:20G:512 250:8G:512" --nvdimm 300:4G:640 \
	--files "$B/keeper $B/where $ROOT/tests/system/progs/devices-guest.sh $ROOT/tests/system/progs/guest-lib.sh" \
	-- sh /usr/local/bin/devices-guest.sh
done_testing
