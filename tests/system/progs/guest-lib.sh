# guest-lib.sh - sourced by the guest sides of the system tests (the
# *-guest.sh scripts; each suite copies it onto the guest's PATH): TAP
# lines without numbers, which the host script counts, and waiting for a
# workload or for tierd.

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else notok "$desc"; fi; }

# wait_for FILE PATTERN TENTHS: until a line of FILE matches PATTERN, at
# most TENTHS tenths of a second. Returns 1 on timeout.
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt "$3" ] && return 1
		sleep 0.1
	done
}

# damon_read FILE: prints DAMON's sysfs FILE. A 7.x kernel answers EBUSY
# to a read of a kdamond's files while another task (tierd) holds DAMON's
# sysfs lock: tried again for up to 5 s; nothing printed when it is gone.
damon_read() {
	i=0
	while [ -e "$1" ] && ! v=$(cat "$1" 2>/dev/null); do
		i=$((i + 1))
		[ $i -gt 50 ] && break
		sleep 0.1
	done
	[ -e "$1" ] && echo "$v"
}

# wait_socket: until tierd answers tierctl status, at most 30 s.
wait_socket() {
	i=0
	while ! tierctl status >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		sleep 0.1
	done
}

# start_hog OUT ARGS...: memhog ARGS in the background ($HOG), its output
# in OUT; waits for "ready" (90 s, or until it dies: then a "not ok" line
# with its output), prints its "memhog ..." line as a comment and sets
# $hog (pid), $hot and $cold (its address ranges). Returns 1 on failure.
start_hog() {
	out=$1
	shift
	$HOG "$@" >"$out" 2>&1 &
	hog=$!
	i=0
	while ! grep -q '^ready$' "$out" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 900 ] || ! kill -0 "$hog" 2>/dev/null; then
			notok "memhog $* started"
			sed 's/^/# /' "$out"
			return 1
		fi
		sleep 0.1
	done
	line=$(grep '^memhog ' "$out")
	echo "# $line"
	hot=$(echo "$line" | sed -n 's/.* hot=\([^ ]*\).*/\1/p')
	cold=$(echo "$line" | sed -n 's/.* cold=\([^ ]*\).*/\1/p')
}
