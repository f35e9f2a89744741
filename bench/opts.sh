# bench/opts.sh - the option loop the guest bench scripts share (sourced by
# bench/guest-tiering.sh and bench/guest-ab.sh).
#
#   bench_opts PROG "NAME..." "USAGE" ARGS...
# takes the leading --NAME VALUE and --NAME=VALUE of ARGS, for each NAME
# listed, calling the script's own bench_opt NAME VALUE; the arguments
# after them are left in BENCH_ARGS (an array). An unknown option, or one
# without its value: "PROG: ..." on stderr and exit 2.
#   bench_layouts PROG LAYOUTS
# checks a --layout value: contiguous, scattered, or both comma-separated.
bench_opts() {
	local prog=$1 names=" $2 " usage=$3 opt val
	shift 3
	while [ $# -gt 0 ]; do
		case $1 in
		--*=*) opt=${1%%=*}; opt=${opt#--}; val=${1#*=} ;;
		--*) opt=${1#--}; val= ;;
		*) break ;;
		esac
		[[ $names == *" $opt "* ]] || { echo "$prog: unknown option $1 $usage" >&2; exit 2; }
		if [[ $1 != *=* ]]; then
			[ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; }
			val=$2
			shift
		fi
		shift
		bench_opt "$opt" "$val"
	done
	BENCH_ARGS=("$@")
}

bench_layouts() {
	local l
	for l in ${2//,/ }; do
		case $l in
		contiguous | scattered) ;;
		*) echo "$1: --layout $l: contiguous, scattered, or both comma-separated" >&2
			exit 2 ;;
		esac
	done
}
