# shellcheck shell=bash
# debian-apt.sh - sourced by scripts/tiered-vm and scripts/build-guest-kernel:
# the Debian archive of the host's own apt configuration, and a private apt
# configuration to fetch packages of any suite from it without touching the
# host's apt state (no archive host name is written anywhere in the repo).
# Bash; the caller sets -euo pipefail.

# apt_source: prints "URI SIGNED-BY" (SIGNED-BY may be empty) of the first
# Debian archive (not security) in the host's apt configuration.
apt_source() {
	if [[ -n ${TIERED_VM_APT_URI:-} ]]; then
		echo "$TIERED_VM_APT_URI"
		return
	fi
	local files=() f
	for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		if [[ -r $f ]]; then files+=("$f"); fi
	done
	((${#files[@]})) || return 1
	# One-line and deb822 entries, in file order; a Debian archive is a URI
	# with a /debian path component, not the security archive, with a main
	# component.
	awk '
	function consider(types, uris, suites, comps, keyring,    n, u, i) {
		if (types !~ /(^|[ \t])deb([ \t]|$)/) return
		if (comps !~ /(^|[ \t])main([ \t]|$)/) return
		n = split(uris, u, /[ \t]+/)
		for (i = 1; i <= n; i++) {
			if (u[i] == "" || u[i] ~ /security/ || suites ~ /-security/) continue
			if (u[i] !~ /\/debian(\/|$)/) continue
			print u[i], keyring
			found = 1
			exit
		}
	}
	function flush() {
		if (in822) consider(t, uris, suites, comps, kr)
		in822 = 0; t = uris = suites = comps = kr = ""
	}
	FNR == 1 { flush() }
	FILENAME ~ /\.sources$/ {
		if ($0 ~ /^[ \t]*$/) { flush(); next }
		if ($0 ~ /^[ \t]*#/) next
		in822 = 1
		line = $0; key = tolower(line); sub(/:.*/, "", key)
		val = line; sub(/^[^:]*:[ \t]*/, "", val)
		if (key == "types") t = val
		else if (key == "uris") uris = val
		else if (key == "suites") suites = val
		else if (key == "components") comps = val
		else if (key == "signed-by" && val ~ /^\//) kr = val
		else if (key == "enabled" && tolower(val) == "no") t = ""
		next
	}
	/^[ \t]*deb[ \t]/ {
		line = $0; kr = ""
		if (match(line, /\[[^]]*\]/)) {
			opts = substr(line, RSTART + 1, RLENGTH - 2)
			line = substr(line, 1, RSTART - 1) " " substr(line, RSTART + RLENGTH)
			if (match(opts, /signed-by=[^ \t]+/)) kr = substr(opts, RSTART + 10, RLENGTH - 10)
		}
		n = split(line, w, /[ \t]+/)
		j = 0
		for (i = 1; i <= n; i++) if (w[i] != "") v[++j] = w[i]
		c = ""
		for (i = 4; i <= j; i++) c = c " " v[i]
		consider("deb", v[2], v[3], c, kr)
		kr = ""
	}
	END { if (!found) flush() }
	' "${files[@]}"
}


# apt_private DIR SUITE: a private apt configuration in DIR (sources list,
# lists, cache, an empty dpkg status) for SUITE's main component of the
# archive apt_source names; sets the array APT_OPTS for apt-get and
# apt-cache. Returns 1 when the host's apt sources name no Debian archive.
apt_private() {
	local w=$1 suite=$2 src uri keyring
	src=$(apt_source) || true
	[[ -n $src ]] || return 1
	read -r uri keyring <<<"$src"
	mkdir -p "$w/lists/partial" "$w/cache/archives/partial"
	if [[ -n $keyring && -r $keyring ]]; then
		echo "deb [signed-by=$keyring] $uri $suite main" >"$w/sources.list"
	else
		echo "deb $uri $suite main" >"$w/sources.list"
	fi
	APT_OPTS=(
		-o "Dir::Etc::sourcelist=$w/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::Etc::preferences=/dev/null -o Dir::Etc::preferencesparts=-
		-o "Dir::State::Lists=$w/lists" -o "Dir::Cache=$w/cache"
		-o Dir::State::status=/dev/null
		-o APT::Architecture=amd64 -o APT::Architectures=amd64
		-o Acquire::Languages=none -o APT::Get::List-Cleanup=0
	)
	[[ $(id -u) != 0 ]] || APT_OPTS+=(-o APT::Sandbox::User=root)
}
