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

# build LOG DIR: make in DIR, its output in LOG; a line every 15 s says how
# far it got (the files compiled and linked so far), and a failure shows
# LOG's end.
build() {
	local log=$1 dir=$2 pid t=0 st=0
	make -C "$dir" -j"$(nproc)" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		t=$((t + 1))
		[ $((t % 15)) -ne 0 ] ||
			echo "    ... ${t}s: $(grep -cE '^ +(CC|CXX|CCLD|CXXLD) ' "$log") files compiled or linked"
	done
	wait "$pid" || st=$?
	if [ $st -ne 0 ]; then
		echo "failed: make -C $dir (last lines of $log):" >&2
		grep -v 'is up to date' "$log" | tail -n 60 >&2
		return $st
	fi
}
