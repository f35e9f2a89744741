# tap.sh - TAP output for shell tests (sourced). Each check prints
# "ok N - what" or "not ok N - what" with the reason as "# " lines;
# done_testing prints the plan and sets the exit status.
_tap_n=0
_tap_failed=0

_tap_result() { # status description [diagnostic...]
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_failed=$((_tap_failed + 1))
		shift 2
		for d in "$@"; do printf '%s\n' "$d" | sed 's/^/#   /'; done
	fi
}

# is GOT EXPECTED DESCRIPTION
is() {
	if [ "$1" = "$2" ]; then _tap_result 0 "$3"
	else _tap_result 1 "$3" "got:      '$1'" "expected: '$2'"; fi
}

# like GOT SUBSTRING DESCRIPTION
like() {
	case "$1" in
	*"$2"*) _tap_result 0 "$3" ;;
	*) _tap_result 1 "$3" "got:      '$1'" "expected to contain: '$2'" ;;
	esac
}

# check DESCRIPTION CMD [ARGS...]: passes when CMD succeeds
check() {
	local desc=$1
	shift
	if "$@"; then _tap_result 0 "$desc"
	else _tap_result 1 "$desc" "command failed: $*"; fi
}

# skip DESCRIPTION REASON
skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

# run CMD [ARGS...]: runs CMD, keeping stdout in $out, stderr in $err and
# the exit status in $rc.
run() {
	local ef
	ef=$(mktemp)
	out=$("$@" 2>"$ef")
	rc=$?
	err=$(cat "$ef")
	rm -f "$ef"
}

# lines TEXT: number of lines in TEXT (0 for empty)
lines() {
	if [ -z "$1" ]; then echo 0; else printf '%s\n' "$1" | wc -l; fi
}

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_failed" = 0 ]
}
