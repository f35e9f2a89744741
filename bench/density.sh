#!/bin/sh
# bench/density.sh - tiersim at a server's density (part of `make bench`,
# bench/run; runs alone too): the default policies on server-dram-cxl (a
# 16 GiB footprint) against the same workloads on dram-cxl (128 MiB, the
# suite's dense machine), and whether the sparse results hinge on the run
# length: every policy's AMAT over DURATION and over twice that, whole and
# over the second half of each (the warm-up left out), side by side.
# Writes bench/results/compare-server-density.{json,txt} and
# compare-server-density-2x.json; the dense runs go to
# compare-dense-density.json. DURATION (simulated seconds) is the first
# argument, default 60.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${TIERD_BUILD:-$ROOT/build}
R=$ROOT/bench/results
D=${1:-60}
D2=$((2 * D))
WL=gups-hotset,zipf,server,server-moving
mkdir -p "$R"

# timed OUT CMD...: runs CMD with its stdout into OUT; prints the wall time
# and the largest resident set of any one run (GNU time's -f %e %M, of the
# compare process, which holds its --jobs runs at once).
timed() {
	out=$1
	shift
	/usr/bin/time -f '%e %M' -o "$out.time" "$@" >"$out"
	awk '{ printf "%s s wall, %.0f MiB max RSS", $1, $2 / 1024 }' "$out.time"
	rm -f "$out.time"
}

cmd="tiersim compare --machine server-dram-cxl --workloads $WL --duration $D --json"
t_sparse=$(timed "$R/compare-server-density.json" "$B/tiersim" compare --machine server-dram-cxl \
	--workloads "$WL" --duration "$D" --json)
t_sparse2=$(timed "$R/compare-server-density-2x.json" "$B/tiersim" compare --machine server-dram-cxl \
	--workloads "$WL" --duration "$D2" --json)
t_dense=$(timed "$R/compare-dense-density.json" "$B/tiersim" compare --machine dram-cxl \
	--workloads "$WL" --duration "$D" --json)

# table JSON FIELD: FIELD per workload and policy, as bench/run's tables.
table() {
	jq -r --arg f "$2" '
	  (.results | map(.policy) | unique) as $ps |
	  (["workload"] + $ps | @tsv),
	  (.results | group_by(.workload)[] |
	    (map({(.policy): .[$f]}) | add) as $m |
	    ([.[0].workload] + [$ps[] | ($m[.] // 0) * 1000 | round / 1000 | tostring]) | @tsv)' \
	  "$1" | column -t
}

{
	echo "# command: make bench (bench/run -> bench/density.sh $D), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# sparse: $cmd ($t_sparse)"
	echo "# again over ${D2} s: --duration $D2 ($t_sparse2)"
	echo "# dense: tiersim compare --machine dram-cxl --workloads $WL --duration $D --json ($t_dense)"
	jq -r '"# sparse machine: \(.results[0].footprint_pages * 4096 / 1073741824) GiB footprint, fast tier \(.results[0].fast_tier_pages * 4096 / 1073741824) GiB; dense: "' \
		"$R/compare-server-density.json" | tr -d '\n'
	jq -r '"\(.results[0].footprint_pages * 4096 / 1048576) MiB footprint, fast tier \(.results[0].fast_tier_pages * 4096 / 1048576) MiB"' \
		"$R/compare-dense-density.json"
	echo
	echo "# AMAT (ns), sparse (server-dram-cxl), ${D} s:"
	table "$R/compare-server-density.json" amat_ns
	echo
	echo "# the application's slowdown, sparse, ${D} s:"
	table "$R/compare-server-density.json" slowdown
	echo
	echo "# AMAT (ns), dense (dram-cxl, 1:4), ${D} s:"
	table "$R/compare-dense-density.json" amat_ns
	echo
	echo "# the application's slowdown, dense, ${D} s:"
	table "$R/compare-dense-density.json" slowdown
	echo
	echo "# run length, sparse: AMAT over ${D} s and ${D2} s, and over the second half of each"
	echo "# (the last $((D / 2)) s of ${D}, the last ${D} s of ${D2}); d2 = second halves' difference, %"
	jq -rn --slurpfile a "$R/compare-server-density.json" --slurpfile b "$R/compare-server-density-2x.json" '
	  (["workload", "policy", "amat_'"$D"'", "amat_'"$D2"'", "half_'"$D"'", "half_'"$D2"'", "d2_%"] | @tsv),
	  ([$a[0].results, $b[0].results] | transpose[] |
	    [.[0].workload, .[0].policy,
	     (.[0].amat_ns * 10 | round / 10), (.[1].amat_ns * 10 | round / 10),
	     (.[0].amat_second_half_ns * 10 | round / 10), (.[1].amat_second_half_ns * 10 | round / 10),
	     ((.[1].amat_second_half_ns / .[0].amat_second_half_ns - 1) * 1000 | round / 10)] | @tsv)' |
		column -t
	echo
	echo "# ranking by second-half AMAT (to the ns; ties in name order), ${D} s | ${D2} s (same order: the run length does not change it)"
	jq -rn --slurpfile a "$R/compare-server-density.json" --slurpfile b "$R/compare-server-density-2x.json" '
	  def rank(r): r | group_by(.workload)[] |
	    {(.[0].workload): (sort_by(.amat_second_half_ns | round) | map(.policy) | join(" < "))};
	  ([rank($a[0].results)] | add) as $x | ([rank($b[0].results)] | add) as $y |
	  $x | keys[] | "\(.): \($x[.])\n\(" " * (. | length)) | \($y[.])\(if $x[.] == $y[.] then "  (same)" else "  (differs)" end)"'
} | tee "$R/compare-server-density.txt"
echo "wrote $R/compare-server-density.txt"
