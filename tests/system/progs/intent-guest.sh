#!/bin/sh
# intent-guest.sh - runs inside the tiered guest for tests/system/intent.sh:
# intent (tierctl hint, libtier) obeyed by tierd on a real kernel, and who
# may state it. Prints TAP lines without numbers; the host script counts
# them. Ends with "guest-done".
#
# The workload (intent_check hog, root's) fills node 0 with cold pages: a
# range pinned with tierctl, one the process pins itself with tier_advise,
# a control range left unadvised, half of a range advised cold; a second
# pinned range starts on node 2, the other half of the advised range on
# node 1, and a hot set larger than the room node 0 can make sits on nodes
# 1 and 2. The hot set (and the advised range) heat up only once tierd has
# laid the intent: pressure before the hints would test the race between
# tierctl and tierd's first steps, not what intent does.
IC=/usr/local/bin/intent_check
WHERE=/usr/local/bin/where
LOG=/tmp/tierd.log
NOBODY=65534
# How long tierd may take (TCG is slow; it takes a few seconds when idle):
# to lay the intent, to settle the placement under pressure, to obey the
# unprivileged user. Together well within tiered-vm's --timeout.
LAID_S=30 SETTLE_S=60 OBEY_S=30

. /usr/local/bin/guest-lib.sh
as_nobody() { su -s /bin/sh nobody -c "$*"; }

# wait_for FILE PATTERN TENTHS: polls FILE for a line matching PATTERN.

# start_workload OUT AS ARGS...: intent_check hog ARGS in the background as AS
# (root or nobody); waits for "ready", sets $hog (its pid), $job (the
# background job's) and $range_NAME for each range it printed.
start_workload() {
	out=$1 as=$2
	shift 2
	if [ "$as" = root ]; then
		$IC hog "$@" >"$out" 2>&1 &
	else
		# su itself in the background, not a function (a subshell that
		# would report the workload's SIGTERM on stderr).
		su -s /bin/sh nobody -c "exec $IC hog $* >$out 2>&1" &
	fi
	job=$!
	if ! wait_for "$out" '^ready$' 600; then
		notok "the workload ($as) started"
		sed 's/^/# /' "$out"
		return 1
	fi
	hog=$(sed -n 's/^intent pid=\([0-9]*\).*/\1/p' "$out")
	for r in pin pin_self pin_up advised control hot; do
		eval "range_$r=\$(sed -n 's/^range $r //p' \"\$out\")"
	done
	sed -n 's/^intent /# workload: /p' "$out"
	ok "the workload ($as) started"
}

# pages RANGE: its 4 KiB pages. start RANGE: its first address.
pages() { echo $(((${1#*-} - ${1%-*}) / 4096)); }
start() { echo "${1%-*}"; }
# on PID RANGE NODE: pages of RANGE of PID on NODE (move_pages queries).
on() { $WHERE "$1" "$2" | tr ' ' '\n' | sed -n "s/^node$3=//p"; }
node0_free_kib() { sed -n 's/.*MemFree: *\([0-9]*\) kB/\1/p' /sys/devices/system/node/node0/meminfo; }
# The room tierd counts free on tier 0 (node 0), and what the tierd policy
# keeps of it, 0.5% of the tier, in KiB: its status (tier 0's comes first;
# tiers[].free_bytes, MemFree less the kernel's reserve; docs/protocol.md).
tier0_bytes() { tierctl status --json | grep -o "\"$1\":[0-9]*" | head -1 | cut -d: -f2; }
tier0_free_kib() { echo $(($(tier0_bytes free_bytes) / 1024)); }
tier0_keep_kib() { echo $(($(tier0_bytes capacity_bytes) / 200 / 1024)); }


# tierd alone: the kernel's own tiering would move pages too (tierd would
# switch it off itself; the workload is placed before tierd starts).
echo 0 >/proc/sys/kernel/numa_balancing
[ -w /sys/kernel/mm/numa/demotion_enabled ] && echo false >/sys/kernel/mm/numa/demotion_enabled
grep -h MemFree /sys/devices/system/node/node*/meminfo | sed 's/^/# /'

# --- 1, 2: pin-fast and cold on a full node 0 ------------------------------

start_workload /tmp/hog.out root --pin-mib 8 --self-pin-mib 8 --pin-up-mib 4 --advised-mib 8 \
	--fill-leave-mib 16 --hot-extra-mib 16 --wait-usr2 || { echo guest-done; exit 1; }
root_hog=$hog
# shellcheck disable=SC2154 # start_workload sets the range_* variables with eval
pin=$range_pin pin_self=$range_pin_self pin_up=$range_pin_up \
	advised=$range_advised control=$range_control hot=$range_hot
np_pin=$(pages "$pin") np_self=$(pages "$pin_self") np_up=$(pages "$pin_up")
np_adv=$(pages "$advised") np_ctl=$(pages "$control") np_hot=$(pages "$hot")
adv_half=$((np_adv * 2048))

check "placed: the pinned ranges on node 0" \
	test "$(($(on "$root_hog" "$pin" 0) + $(on "$root_hog" "$pin_self" 0)))" -eq $((np_pin + np_self))
check "placed: the range to pull up on node 2" test "$(on "$root_hog" "$pin_up" 2)" -eq "$np_up"
check "placed: no hot page on node 0" test "$(on "$root_hog" "$hot" 0)" -eq 0
c=$(on "$root_hog" "$control" 0)
check "placed: the control range fills node 0 (>= 90% of its $np_ctl pages there: $c)" \
	test $((c * 10)) -ge $((np_ctl * 9))
echo "# node 0 free after placement: $(node0_free_kib) KiB"

mkdir -p /etc/tierd
cat >/etc/tierd/tierd.yaml <<YAML
daemon:
  interval_ms: 200
  refresh_ms: 1000
  # Under QEMU's emulation a step costs tens of times what it does on
  # hardware: let tierd use half a core so the test measures placement.
  max_cpu_percent: 50
processes:
  min_rss_mb: 64
YAML
tierd --foreground 2>$LOG &
tierd_pid=$!
check "tierd starts and answers" wait_socket
check "the workload pinned a range itself (tier_advise PIN_FAST returned 0)" \
	wait_for /tmp/hog.out '^self-advised pin-fast: 0 ' 300
grep '^self-advised' /tmp/hog.out | sed 's/^/# /'
check "tierctl hint pin-fast on a range of node 0" \
	tierctl hint "$root_hog" "$(start "$pin")" $((np_pin * 4096)) pin-fast
check "tierctl hint pin-fast on a range of node 2" \
	tierctl hint "$root_hog" "$(start "$pin_up")" $((np_up * 4096)) pin-fast
check "tierctl hint cold on a range (node 0 half)" \
	tierctl hint "$root_hog" "$(start "$advised")" $adv_half cold
check "tierctl hint cold on a range (node 1 half)" \
	tierctl hint "$root_hog" $(($(start "$advised") + adv_half)) $adv_half cold

# The hints are laid when their moves show: the range pinned on node 2
# comes up, the range advised cold goes down (hints are laid together, so
# the first pin's is laid too).
t0=$(date +%s)
while :; do
	u0=$(on "$root_hog" "$pin_up" 0) a2=$(on "$root_hog" "$advised" 2)
	[ "$u0" -eq "$np_up" ] && [ "$a2" -eq "$np_adv" ] && break
	[ $(($(date +%s) - t0)) -ge $LAID_S ] && break
	sleep 0.5
done
echo "# intent laid after $(($(date +%s) - t0)) s: up $u0/$np_up advised@2 $a2/$np_adv"
check "pin-fast pulled a cold range up from node 2 to node 0 ($u0 of $np_up pages)" test "$u0" -eq "$np_up"
check "a range advised cold went to the slowest node ($a2 of $np_adv pages on node 2)" \
	test "$a2" -eq "$np_adv"

# Now the hot set heats up and competes for node 0.
ctl0=$(on "$root_hog" "$control" 0)
echo "# control pages on node 0: $ctl0; node 0 free: $(node0_free_kib) KiB; hot set: $np_hot pages"
kill -USR2 "$root_hog"
check "the hot phase began" wait_for /tmp/hog.out '^hot-phase$' 100

# The hot set took the room the control range left: at least 90% of its
# pages - or, where something else took part of the room meanwhile (the
# guest's kernel and page cache: in one run 1,200 pages), tier 0 filled
# to what tierd leaves free (4 MiB over it at most, by its own count) and
# at least 80% of them.
hot_took_room() {
	[ $((h0 * 10)) -ge $((ctl0 * 9)) ] ||
		{ [ $((h0 * 10)) -ge $((ctl0 * 8)) ] && [ "$(tier0_free_kib)" -le $(($(tier0_keep_kib) + 4096)) ]; }
}

# Poll until the placement settles: every pinned page on node 0, the
# advised (now hot) range on node 2, the control range gone from node 0 and
# hot pages in its place.
t=0 t0=$(date +%s)
while :; do
	p0=$(on "$root_hog" "$pin" 0) s0=$(on "$root_hog" "$pin_self" 0) u0=$(on "$root_hog" "$pin_up" 0)
	a2=$(on "$root_hog" "$advised" 2) c0=$(on "$root_hog" "$control" 0) h0=$(on "$root_hog" "$hot" 0)
	t=$(($(date +%s) - t0))
	if [ "$p0" -eq "$np_pin" ] && [ "$s0" -eq "$np_self" ] && [ "$u0" -eq "$np_up" ] &&
		[ "$a2" -eq "$np_adv" ] && [ $((c0 * 10)) -le "$ctl0" ] && hot_took_room; then
		break
	fi
	[ "$t" -ge $SETTLE_S ] && break
	[ $((t % 10)) -eq 0 ] && echo "# t=${t}s pin $p0/$np_pin self $s0/$np_self up $u0/$np_up advised@2 $a2/$np_adv control@0 $c0 hot@0 $h0"
	sleep 1
done
echo "# after ${t} s: pin $p0/$np_pin self $s0/$np_self up $u0/$np_up advised@2 $a2/$np_adv control@0 $c0/$ctl0 hot@0 $h0/$np_hot; node 0 free $(node0_free_kib) KiB"

# Pinned pages never move off node 0: no tolerance.
check "pin-fast (tierctl) kept its cold range on node 0 ($p0 of $np_pin pages)" test "$p0" -eq "$np_pin"
check "pin-fast (libtier, from the process) kept its cold range on node 0 ($s0 of $np_self)" \
	test "$s0" -eq "$np_self"
check "pin-fast kept the range pulled up from node 2 on node 0 ($u0 of $np_up)" test "$u0" -eq "$np_up"
# The unpinned control range, as cold, was demoted: at most 10% of what it
# had on node 0 is left (room kept for the headroom and failed moves).
check "the unpinned control range was demoted ($c0 of $ctl0 pages left on node 0)" \
	test $((c0 * 10)) -le "$ctl0"
# The hot set took the room: at least 90% of the control range's pages.
check "the hot set fills the rest of node 0 ($h0 hot pages there, control had $ctl0; node 0 free $(node0_free_kib) KiB; tierd counts $(tier0_free_kib) KiB free and keeps $(tier0_keep_kib))" \
	hot_took_room
check "the hot set is larger than node 0's room ($((np_hot - h0)) hot pages still below)" \
	test "$h0" -lt "$np_hot"
check "the range advised cold stayed on the slowest node while hot ($a2 of $np_adv pages on node 2)" \
	test "$a2" -eq "$np_adv"

# The process's own view, through tier_query, agrees.
kill -USR1 "$root_hog"
if wait_for /tmp/hog.out '^query-done 1$' 300; then
	grep '^query 1 ' /tmp/hog.out | sed 's/^/# /'
	q() { sed -n "s/^query 1 $1 .* $2=\([0-9]*\).*/\1/p" /tmp/hog.out; }
	check "tier_query: the pinned ranges are in tier 0" \
		test "$(($(q pin tier0) + $(q pin_self tier0) + $(q pin_up tier0)))" -eq $((np_pin + np_self + np_up))
	check "tier_query: the range advised cold is on node 2" test "$(q advised node2)" -eq "$np_adv"
	# The control range and the hot set may still be moving; the ranges
	# intent holds in place are not.
	check "tier_query agrees with move_pages from outside on the advised ranges" \
		test "$(q pin node0) $(q pin_self node0) $(q pin_up node0) $(q advised node2)" = \
		"$(on "$root_hog" "$pin" 0) $(on "$root_hog" "$pin_self" 0) $(on "$root_hog" "$pin_up" 0) $(on "$root_hog" "$advised" 2)"
else
	notok "the workload answered the query"
fi

st=$(tierctl status --json)
echo "# status: $st"
check "status counts demoted bytes" test "${st#*\"demoted_bytes\":[1-9]}" != "$st"
check "the log records the accepted hints" grep -q "hint: pid $root_hog " $LOG

# --- 3: who may advise whom -------------------------------------------------

check "su runs commands as uid $NOBODY" test "$(as_nobody id -u)" = $NOBODY
pin_addr=$(start "$pin")
as_nobody "tierctl hint $root_hog $pin_addr 4096 cold" >/tmp/hint.out 2>&1
rc=$?
sed 's/^/# tierctl: /' /tmp/hint.out
check "tierctl hint by uid $NOBODY on root's process exits non-zero ($rc)" test "$rc" -ne 0
check "and says EPERM: who may not advise whom" \
	grep -q "uid $NOBODY may not advise process $root_hog (owned by uid 0)" /tmp/hint.out
if wait_for $LOG "uid $NOBODY may not advise process $root_hog" 50; then
	ok "the daemon log shows the refusal"
	grep "may not advise" $LOG | sed 's/^/# log: /'
else
	notok "the daemon log shows the refusal"
fi
out=$(as_nobody "$IC advise-pid $root_hog $pin_addr 4096 cold")
echo "# $out"
check "tier_advise_pid by uid $NOBODY on root's process returns -EPERM" \
	test "${out#advise-pid: -EPERM }" != "$out"
out=$(as_nobody "$IC query-pid $root_hog $pin_addr 4096")
echo "# $out"
check "the move_pages query of tier_query on root's process by uid $NOBODY fails with EPERM" \
	test "${out#query-pid: -EPERM }" != "$out"
# Had the refused cold advice been taken, the page would leave node 0.
sleep 3
check "the refused advice changed nothing (the pinned range is still on node 0)" \
	test "$(on "$root_hog" "$pin" 0)" -eq "$np_pin"

# The same user may advise its own process: a small one, kept hot wherever
# there was room for it (node 0 is full: mostly node 1).
if start_workload /tmp/own.out nobody --advised-mib 8 --seconds 300; then
	# shellcheck disable=SC2154 # set by start_workload
	own=$hog own_job=$job own_adv=$range_advised
	own_half=$(($(pages "$own_adv") * 2048))
	check "the second workload belongs to uid $NOBODY" test "$(stat -c %u /proc/"$own")" = $NOBODY
	as_nobody "tierctl hint $own $(start "$own_adv") $own_half cold" >/tmp/hint.out 2>&1
	rc=$?
	sed 's/^/# tierctl: /' /tmp/hint.out
	check "tierctl hint by uid $NOBODY on its own process succeeds" test "$rc" -eq 0
	out=$(as_nobody "$IC advise-pid $own $(($(start "$own_adv") + own_half)) $own_half cold")
	echo "# $out"
	check "tier_advise_pid by uid $NOBODY on its own process returns 0" test "$out" = "advise-pid: 0"
	out=$(as_nobody "$IC query-pid $own $(start "$own_adv") $((own_half * 2))")
	echo "# $out"
	check "the move_pages query by uid $NOBODY on its own process succeeds" \
		test "${out#query-pid: 0 }" != "$out"
	np_own=$(pages "$own_adv")
	t0=$(date +%s)
	while [ "$(on "$own" "$own_adv" 2)" -lt "$np_own" ] && [ $(($(date +%s) - t0)) -lt $OBEY_S ]; do
		sleep 1
	done
	o2=$(on "$own" "$own_adv" 2)
	echo "# after $(($(date +%s) - t0)) s: $o2 of $np_own pages of uid $NOBODY's advised range on node 2"
	check "tierd obeyed uid $NOBODY's advice: its hot range advised cold is on node 2" \
		test "$o2" -eq "$np_own"
	check "root may advise uid $NOBODY's process" \
		tierctl hint "$own" "$(start "$own_adv")" 4096 default
	kill "$own" 2>/dev/null
	wait $own_job 2>/dev/null
fi

check "root's workload lived through it all" kill -0 "$root_hog"
kill $tierd_pid
wait $tierd_pid
check "tierd exits 0 on SIGTERM" test $? -eq 0
grep -E 'error|warning|notice|hint' $LOG | tail -n 20 | sed 's/^/# log: /'
kill "$root_hog" 2>/dev/null
wait "$root_hog" 2>/dev/null
echo guest-done
