#!/bin/sh
# cgroups-guest.sh - runs inside the tiered guest for tests/system/cgroups.sh:
# two control groups compete for node 0 under tierd; one is capped at
# 128 MiB of tier 0 (config), the other's hot set rises; then a cap set
# with tierctl at run time demotes the other's excess. Prints TAP lines
# without numbers; ends with "guest-done".
HOG=/usr/local/bin/memhog
WHERE=/usr/local/bin/where
LOG=/tmp/tierd.log
CG=/sys/fs/cgroup
MIB=1048576
BATCH_MIB=1		# one move_pages batch: 256 pages

. /usr/local/bin/guest-lib.sh

# start_in CGROUP OUT ARGS...: memhog in a cgroup; sets pid, hot.
start_in() {
	cg=$1 out=$2
	shift 2
	sh -c "echo \$\$ >$CG/$cg/cgroup.procs && exec $HOG $*" >"$out" 2>&1 &
	pid=$!
	i=0
	while ! grep -q '^ready$' "$out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 900 ] && { notok "memhog in $cg ready"; sed 's/^/# /' "$out"; return 1; }
		sleep 0.1
	done
	hot=$(sed -n 's/.* hot=\([^ ]*\).*/\1/p' "$out")
	echo "# $cg: $(grep '^memhog ' "$out")"
}

node0_mib() { # CGROUP -> MiB of its anon memory on node 0 (memory.numa_stat)
	awk '$1 == "anon" { for (i = 2; i <= NF; i++) if ($i ~ /^N0=/) { sub("N0=", "", $i); print int($i / 1048576) } }' \
		"$CG/$1/memory.numa_stat"
}

echo "+memory" >"$CG/cgroup.subtree_control" 2>/dev/null
mkdir -p "$CG/capped" "$CG/free"
check "the memory controller is on for the test groups" test -f "$CG/capped/memory.numa_stat"

# Both hot sets start on slow nodes: 160 MiB each, all hot.
start_in capped /tmp/a.out --mib 160 --hot-mib 160 --hot-node 1 || exit 1
a_pid=$pid a_hot=$hot
start_in free /tmp/b.out --mib 160 --hot-mib 160 --hot-node 2 || exit 1
b_pid=$pid b_hot=$hot
echo "# before: capped on node 0: $(node0_mib capped) MiB, free: $(node0_mib free) MiB"

mkdir -p /etc/tierd
cat >/etc/tierd/tierd.yaml <<YAML
daemon:
  interval_ms: 200
  refresh_ms: 1000
  # QEMU's emulation makes a step cost tens of times what it does on
  # hardware: let tierd use half a core so the test measures placement.
  max_cpu_percent: 50
processes:
  min_rss_mb: 64
cgroups:
  - path: capped
    tier_max: ["0=128M"]
YAML
tierd --foreground 2>$LOG &
tierd_pid=$!
i=0
while ! tierctl status >/dev/null 2>&1 && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
check "tierd starts with a cgroups rule" tierctl status

# Watch both groups until the free one's hot set is mostly on node 0.
max_a=0
i=0
while [ $i -lt 180 ]; do
	a=$(node0_mib capped) b=$(node0_mib free)
	[ "$a" -gt "$max_a" ] && max_a=$a
	[ $((i % 10)) = 0 ] && echo "# t=${i}s node 0: capped $a MiB, free $b MiB"
	[ "$b" -ge 144 ] && [ "$a" -ge 120 ] && break
	i=$((i + 1))
	sleep 1
done
echo "# after ${i}s: capped $a MiB (most $max_a), free $b MiB on node 0"
check "the capped group reached its share of node 0 ($a MiB)" test "$a" -ge 100
check "the capped group never held more than 128 MiB + one batch of node 0 (most $max_a MiB)" \
	test "$max_a" -le $((128 + BATCH_MIB))
check "the other group's hot set rose to node 0 ($b of 160 MiB)" test "$b" -ge 144
check "move_pages agrees: capped hot set on node 0 <= 128 MiB + a batch" \
	test "$($WHERE "$a_pid" "$a_hot" | tr ' ' '\n' | sed -n 's/^node0=//p')" -le $(((128 + BATCH_MIB) * 256))

tierctl cgroup show >/tmp/show.txt 2>&1
sed 's/^/# /' /tmp/show.txt
check "cgroup show lists the rule with its cap" grep -q '^  0 .* 128M (128 MiB)' /tmp/show.txt
tierctl cgroup show --json >/tmp/show.json 2>&1
check "cgroup show --json: one managed process in capped" \
	test "$(jq '.cgroups[] | select(.path == "capped") | .processes' /tmp/show.json)" = 1
check "cgroup show --json: used bytes of tier 0 within max + a batch" \
	test "$(jq "[.cgroups[] | select(.path == \"capped\") | .tiers[0] | .used_bytes <= .max_bytes + $BATCH_MIB * $MIB] | all" /tmp/show.json)" = true

# A cap set at run time: the free group's excess goes down.
check "tierctl cgroup set at run time" tierctl cgroup set free --tier-max 0=32M
i=0
while [ $i -lt 120 ]; do
	b=$(node0_mib free)
	[ "$b" -le $((32 + BATCH_MIB)) ] && break
	i=$((i + 1))
	sleep 1
done
echo "# ${i}s after the run-time cap: free holds $b MiB of node 0"
check "the run-time cap demoted the excess ($b MiB <= 32 MiB + a batch)" test "$b" -le $((32 + BATCH_MIB))
check "the log names the demotions' reason" grep -q "cgroup free: rule set" $LOG
explained() { # some page of the free group's hot set is explained by its cap
	start=$((${b_hot%-*}))
	for off in 0 16 32 48 64 80 96 112 128 144; do
		tierctl explain "$b_pid" $((start + off * MIB)) 256K >/tmp/explain.out 2>&1 || return 1
		grep -q 'control group' /tmp/explain.out && return 0
	done
	return 1
}
check "tierctl explain tells a capped page's story" explained
grep -B1 'control group' /tmp/explain.out | head -n 4 | sed 's/^/# /'

# Bad rules are refused with the reason, and the running ones kept.
tierctl cgroup set free --tier-max 0=1M --tier-min 0=2M >/tmp/bad.out 2>&1
check "a min above the max is refused" grep -q "min 2M is above max 1M" /tmp/bad.out
check "tierd survived" kill -0 "$tierd_pid"

# The group removed under tierd: no crash, a clear log line.
kill "$b_pid"
wait "$b_pid" 2>/dev/null
rmdir "$CG/free"
sleep 3
check "tierd survives a removed cgroup" kill -0 "$tierd_pid"
tierctl cgroup show --json >/tmp/show2.json 2>&1
check "show says the removed group is gone" \
	test "$(jq '.cgroups[] | select(.path == "free") | .exists' /tmp/show2.json)" = false

kill "$tierd_pid" "$a_pid"
wait "$tierd_pid"
check "tierd exits 0" test $? = 0
grep -i "error\|cgroup" $LOG | head -n 20 | sed 's/^/# log: /'
echo guest-done
