# jitperf inject against perf inject --jit, symbol by symbol (sourced by
# tests/cmd/inject-diff-*.test after tests/test-subr.sh).  A JIT runs
# under perf record; the same perf.data goes through both injectors, and
# perf report's samples per symbol (self, by name: perf inject's one file
# per function and jitperf's images split the same symbol into rows of
# their own) must be equal, or within $diff_tol percent of all samples
# where perf itself is not deterministic; jitperf's share of samples in no
# symbol must be no larger.  On a mismatch the test prints both counts of
# every symbol that differs and fails.
#
#   diff_record DIR [PERF-RECORD-OPTION...] -- CMD...
#       CMD run in DIR under perf record -k 1 -e cpu-clock into
#       DIR/perf.data, with JITPERF=$diff_jitperf and JITPERF_DIR=DIR; its
#       stdout in DIR/out.  A CMD that exits 77 skips the test.  The
#       default is a jitdump alone: with a perf map in /tmp perf would
#       name the code of a mapping the injection missed.
#   diff_inject DIR
#       perf inject --jit into DIR/perf.pi.data (its jitted-*.so files go
#       where the jitdump is), jitperf inject into DIR/j/perf.jit.data;
#       both under ulimit -n $diff_nofile when that is set.
#   diff_counts FILE       samples per symbol of perf report on FILE
#   diff_compare NAME A B [REF]
#       compare two diff_counts files, A the reference (named REF,
#       default perf inject)
#   diff_check DIR
#       diff_inject, then compare the two outputs' samples per symbol
#       (DIR/pi.counts, DIR/j.counts); a difference is printed and noted
#   diff_check_perfmap DIR PID
#       a recording whose JIT wrote only /tmp/perf-PID.map, which perf
#       inject ignores: plain perf report with the map in /tmp is the
#       reference, jitperf inject's output is read with the map gone.
#   diff_samples FILE NAME, diff_share FILE NAME|PREFIX*
#       in a diff_counts file: the samples of NAME; the percentage of all
#       samples in NAME, or in the functions whose names start with PREFIX
#   diff_done
#       ends the test: it fails if a comparison found a difference
need_perf
: "${diff_tol:=0}" "${diff_jitperf:=jitdump}"

diff_record() {
	_d=$1
	shift
	_opts=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		_opts="$_opts $1"
		shift
	done
	[ $# -gt 1 ] || fail "diff_record $_d: no command after --"
	shift
	mkdir -p "$_d"
	_st=0
	(cd "$_d" && export JITPERF="$diff_jitperf" JITPERF_DIR="$PWD" &&
		exec "$PERF" record -q -k 1 -e cpu-clock -F "${diff_freq:-2000}" $_opts -o perf.data \
			"$@" >out 2>record.err) || _st=$?
	[ "$_st" != 77 ] || skip "$1: not on this machine ($(cat "$_d/out" "$_d/record.err" | head -1))"
	[ "$_st" = 0 ] || fail "perf record $_opts $*: status $_st: $(cat "$_d/record.err")"
}

diff_inject() {
	_d=$1
	mkdir -p "$_d/j"
	(
		[ -z "${diff_nofile:-}" ] || ulimit -n "$diff_nofile"
		"$PERF" inject --jit -i "$_d/perf.data" -o "$_d/perf.pi.data"
	) 2>"$_d/pinject.err" || fail "perf inject --jit${diff_nofile:+ (ulimit -n $diff_nofile)}: $(tail -3 "$_d/pinject.err")"
	_st=0
	(
		[ -z "${diff_nofile:-}" ] || ulimit -n "$diff_nofile"
		exec "$JITPERF" inject -i "$_d/perf.data" -o "$_d/j/perf.jit.data"
	) 2>"$_d/jinject.err" || _st=$?
	[ "$_st" = 0 ] ||
		fail "$_d: jitperf inject${diff_nofile:+ (ulimit -n $diff_nofile)} exits $_st: $(head -3 "$_d/jinject.err")"
	[ ! -s "$_d/jinject.err" ] || echo "$_d: jitperf inject said: $(head -3 "$_d/jinject.err")"
}

# "COUNT<tab>SYMBOL" per symbol, "[.] " or "[k] " before the name; the
# addresses perf names no symbol for are one symbol, [unknown]
diff_counts() {
	"$PERF" report -i "$1" --stdio --no-children -g none --sort sym -F sample,sym -t '|' -q \
		2>"$1.report.err" |
		awk '{
			i = index($0, "|"); n = substr($0, 1, i - 1) + 0; s = substr($0, i + 1)
			sub(/[ \t]+$/, "", s)
			if (s ~ /^\[.\] 0x[0-9a-f]+$/) s = "[unknown]"
			c[s] += n
		} END { for (s in c) printf "%d\t%s\n", c[s], s }' | sort -t '	' -k2
}

# diff_compare NAME A B [REF]: 0 when every symbol has the same samples in A
# and B, within $diff_tol % of A's total, and B's [unknown] is no more
# than A's; else a table of the symbols that differ, and 1
diff_compare() {
	awk -F '\t' -v name="$1" -v tol="$diff_tol" -v la="${4:-perf inject}" -v lb="jitperf inject" '
	FNR == 1 { f++ }
	!($2 in sym) { sym[$2] = 1; ns++ }
	f == 1 { a[$2] = $1; ta += $1 }
	f == 2 { b[$2] = $1; tb += $1 }
	END {
		lim = tol * ta / 100
		for (s in sym) {
			d = b[s] - a[s]
			if (d > lim || -d > lim || (s == "[unknown]" && d > 0))
				bad[s] = d
		}
		nb = 0
		for (s in bad) nb++
		if (!nb && ta == tb)
			exit 0
		printf "%s: %d of %d symbols differ (%s: %d samples, %s: %d; tolerance %d)\n",
			name, nb, ns, la, ta, lb, tb, lim
		printf "  %-44s %12s %15s %8s\n", "symbol", la, lb, "diff"
		# the worst first, at most 40 rows; [unknown] always
		for (k = 0; k < 40 && nb; k++) {
			w = ""
			for (s in bad)
				if (w == "" || bad[s] * bad[s] > bad[w] * bad[w]) w = s
			printf "  %-44s %12d %15d %+8d\n", w, a[w], b[w], bad[w]
			if (w == "[unknown]") shown = 1
			delete bad[w]; nb--
		}
		if (nb) printf "  ... and %d more\n", nb
		if (!shown && !("[unknown]" in bad))
			printf "  %-44s %12d %15d %+8d\n", "[unknown]", a["[unknown]"], b["[unknown]"],
				b["[unknown]"] - a["[unknown]"]
		exit 1
	}' "$2" "$3"
}

# the count of symbol $2 in diff_counts file $1
diff_samples() {
	awk -F '\t' -v s="$2" '$2 == s || $2 == "[.] " s { n += $1 } END { print n + 0 }' "$1"
}

# the percentage of diff_counts file $1's samples in function $2, or in
# the functions whose names start with $2's text before a final *
diff_share() {
	awk -F '\t' -v p="[.] $2" '
		BEGIN { pre = sub(/\*$/, "", p) }
		pre ? index($2, p) == 1 : $2 == p { n += $1 } { t += $1 }
		END { printf "%d\n", t ? 100 * n / t : 0 }' "$1"
}

diff_failed=
diff_check() {
	_d=$1
	diff_inject "$_d"
	diff_counts "$_d/perf.pi.data" >"$_d/pi.counts"
	diff_counts "$_d/j/perf.jit.data" >"$_d/j.counts"
	if diff_compare "$_d" "$_d/pi.counts" "$_d/j.counts"; then
		echo "$_d: $(wc -l <"$_d/j.counts") symbols, $(awk '{ n += $1 } END { print n }' "$_d/j.counts") samples, as after perf inject"
	else
		diff_failed="$diff_failed $_d"
	fi
}

diff_check_perfmap() {
	_d=$1 _pid=$2
	own_pid "$_pid"
	[ -s "/tmp/perf-$_pid.map" ] || fail "$_d: no /tmp/perf-$_pid.map"
	diff_counts "$_d/perf.data" >"$_d/plain.counts"
	mkdir -p "$_d/j"
	"$JITPERF" inject -i "$_d/perf.data" -o "$_d/j/perf.jit.data" 2>"$_d/jinject.err" ||
		fail "$_d: jitperf inject: $(head -3 "$_d/jinject.err")"
	mkdir "$_d/map"
	mv "/tmp/perf-$_pid.map" "$_d/map/"
	diff_counts "$_d/j/perf.jit.data" >"$_d/j.counts"
	if diff_compare "$_d" "$_d/plain.counts" "$_d/j.counts" "plain perf"; then
		echo "$_d: $(wc -l <"$_d/j.counts") symbols, as plain perf with the perf map"
	else
		diff_failed="$diff_failed $_d"
	fi
}

# the test's end: it fails when a diff_check found a difference
diff_done() {
	[ -z "$diff_failed" ] || fail "jitperf inject's samples per symbol differ in:$diff_failed"
	exit 0
}
