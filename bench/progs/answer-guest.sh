#!/bin/sh
# answer-guest.sh - runs inside the tiered guest: how long tierd's control
# socket takes to answer while tierd places a GUPS hot set (bench/progs/
# gups.c), measured by bench/progs/answer-probe.c over one connection.
#   answer-guest.sh LAYOUT SECONDS TIERD...
# Each tierd binary in turn (default configuration, kernel tiering off),
# on a fresh gups; prints the probe's answers over 50 ms and its summary
# lines, prefixed "RESULT bin=VERSION".
LAYOUT=${1:-scattered}
SECS=${2:-30}
shift 2
[ -w /sys/module/damon_stat/parameters/enabled ] && echo N >/sys/module/damon_stat/parameters/enabled
for bin in "$@"; do
	echo 0 >/proc/sys/kernel/numa_balancing
	echo false >/sys/kernel/mm/numa/demotion_enabled
	sync
	echo 3 >/proc/sys/vm/drop_caches
	rm -f /tmp/go /tmp/gups.out
	gups --layout "$LAYOUT" --seconds "$SECS" --go-file /tmp/go >/tmp/gups.out 2>&1 &
	g=$!
	while ! grep -q '^ready$' /tmp/gups.out 2>/dev/null; do sleep 0.2; done
	rm -f /etc/tierd/tierd.yaml
	$bin --foreground 2>/tmp/tierd.log &
	tp=$!
	i=0
	while ! tierctl status >/dev/null 2>&1 && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	echo $tp >/tmp/go
	v=$($bin --version | cut -d' ' -f2)
	answer-probe /run/tierd/tierd.sock $g "$SECS" 250 >/tmp/answer.out 2>&1
	awk -v v="$v" '$1 == "answer" && $4 > 50 { print "RESULT bin=" v " slow " $2 " ms: " $3 " " $4 " ms" }
		$1 == "answer-ms" { print "RESULT bin=" v " " $0 } $1 != "answer" && $1 != "answer-ms" { print "# " $0 }' /tmp/answer.out
	wait $g
	kill $tp; i=0
	while kill -0 $tp 2>/dev/null && [ $i -lt 20 ]; do sleep 1; i=$((i + 1)); done
	kill -9 $tp 2>/dev/null
	sleep 2
done
