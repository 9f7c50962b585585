# Shared by the .ci scripts (sourced): progress lines, quiet commands,
# package installation.

# One progress line per stage, with the time since the script started.
stage() { printf '==> %s [%ds]\n' "$*" "$SECONDS"; }

# quietly LOG CMD...: run CMD with its output in LOG; on failure show LOG's end.
quietly() {
	local log=$1; shift
	if ! "$@" >"$log" 2>&1; then
		echo "failed: $* (last lines of $log):" >&2
		tail -n 60 "$log" >&2
		return 1
	fi
}

# install_missing PKG...: apt-get install those not installed, quietly
# (debconf's notes and apt's progress go to /tmp/jitperf-apt.log).
install_missing() {
	local p missing=() sudo=
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	stage "installing ${missing[*]}"
	quietly /tmp/jitperf-apt.log $sudo apt-get update -qq
	quietly /tmp/jitperf-apt.log $sudo env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "${missing[@]}"
	# the downloaded packages are not needed once installed: on a small
	# disk the suite needs their room
	$sudo apt-get clean
}
