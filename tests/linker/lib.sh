# lib.sh — what every tests/linker/*.sh test shares.  Source it first:
#   . "$(dirname "$0")/lib.sh"
# One test a file: tests/linker/NAME.sh is the ctest test `linker.NAME`
# (link-time layout tests of linker-scripts/enormous.ld; see README.md in
# this folder for what each one shows), runnable alone as
#   ctest --test-dir build -R '^linker\.NAME$' --output-on-failure
# or directly, after a build, with the variables below set as
# CMakeLists.txt sets them, e.g.
#   LT_CC=cc LT_SCRIPT=$PWD/linker-scripts/enormous.ld LT_SOURCE=$PWD/tests/linker/sample.c \
#   LT_WORK_ROOT=/tmp/lt bash tests/linker/NAME.sh
# Each test links sample.c with a linker and reads the program headers back.
#
# Environment (from CMakeLists.txt): LT_CC (the C compiler), LT_SCRIPT
# (enormous.ld), LT_SOURCE (sample.c), LT_WORK_ROOT (all four required);
# for alone.aarch64_16k: LT_SCRIPT_32M (enormous-32m.ld, made by the build);
# for runtime.*: LT_PRELOAD (libenormoustext.so), LT_STATIC
# (libenormoustext.a), LT_CLANG (clang, or empty).
# Exit: 0 pass, 1 fail, 77 skip (a linker or cross compiler is missing),
# 2 set-up error.
#
# It sources tests/lib/lib.sh (strict mode, the test's name T, the verdicts
# fail MSG... / skip MSG... / pass, note, at_exit: see there), makes a work
# directory $W (removed at exit unless LT_KEEP=1) and defines (each
# described where it is defined, below):
#   H FLAGS SCRIPT                          2 MiB, the -z flags, -T enormous.ld
#   link, loads, check, huge_share, run_huge, have_lld
#   aarch64_links                           alone.aarch64*, layout.aarch64
#   layout_test, alone_test, alternative_test, script_refused, runtime_test
#                                           shared by one family of tests
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"
# The start-up path: the library moves the text in its constructor, so the
# programs' own checks see the result at once (the default deferral,
# ENORMOUSTEXT_DEFER=1s, has tests of its own), and copies stay copies (no
# priming: ENORMOUSTEXT_PRIME=auto has tests of its own).
export ENORMOUSTEXT_DEFER=0 ENORMOUSTEXT_PRIME=0

for v in LT_CC LT_SCRIPT LT_SOURCE LT_WORK_ROOT; do
	if [ -z "${!v:-}" ]; then
		echo "$T: $v is not set: run the test through ctest (ctest --test-dir BUILD -R '^linker\\.${T//./\\.}\$')," \
		     "or set LT_CC, LT_SCRIPT, LT_SOURCE and LT_WORK_ROOT (LT_SCRIPT_32M for alone.aarch64_16k;" \
		     "LT_PRELOAD, LT_STATIC and LT_CLANG for runtime.*) as tests/linker/CMakeLists.txt does"
		exit 2
	fi
done
H=$((0x200000))
et_workdir "$LT_WORK_ROOT" LT_KEEP
W=$ET_WORK
FLAGS=(-Wl,-z,max-page-size=0x200000 -Wl,-z,separate-code)
SCRIPT=(-Wl,-T,"$LT_SCRIPT")

# link OUT CC KIND(pie|nopie|dso) EXTRA... — link sample.c; the linker
# must say nothing (no warning) and succeed.
link() {
	local out=$1 cc=$2 kind=$3 k=()
	shift 3
	case $kind in
	pie) k=(-fPIE -pie) ;;
	nopie) k=(-fno-PIE -no-pie) ;;
	dso) k=(-fPIC -shared -DSAMPLE_DSO) ;;
	static) k=(-fno-PIE -static) ;;
	static-pie) k=(-fPIE -static-pie) ;;
	esac
	echo "-- $cc -O2 ${k[*]} $* -o $out"
	"$cc" -O2 "${k[@]}" "$LT_SOURCE" "$@" -o "$W/$out" >"$W/$out.log" 2>&1
	local rc=$?
	sed 's/^/   | /' "$W/$out.log"
	[ $rc -eq 0 ] || fail "linking $out failed"
	[ ! -s "$W/$out.log" ] || fail "linking $out printed something (a warning?): $(head -1 "$W/$out.log")"
}

# loads FILE — one line per PT_LOAD: "offset vaddr filesz memsz flags align"
# (decimal; flags as readelf writes them, without spaces: R, RE, RW, RWE).
loads() {
	readelf -lW "$1" | awk '$1 == "LOAD" { f = ""; for (i = 7; i < NF; i++) f = f $i; print $2, $3, $5, $6, f, $NF }' |
		while read -r o v fs ms f a; do echo "$((o)) $((v)) $((fs)) $((ms)) $f $((a))"; done
}

# check FILE strict|alone|flags — the layout rules; prints the program
# headers.  strict: the script with the -z flags (every segment 2 MiB
# p_align); alone: the script only (the executable segment's p_align is
# 2 MiB, the others keep the default: the kernel and the loader align the
# load base to the largest one); flags: the flags without the script.
check() {
	local file=$1 mode=$2 nx=0 xo xv xf xm xa o v fs ms f a
	echo "-- program headers of $(basename "$file"):"
	readelf -lW "$file" | grep -E '^ +(LOAD|Type)' | sed 's/^/   | /'
	while read -r o v fs ms f a; do
		case $f in *W*E* | *WE*) fail "$(basename "$file"): a LOAD segment is writable and executable ($f)" ;; esac
		case $f in
		*E*) nx=$((nx + 1)); xo=$o; xv=$v; xf=$fs; xm=$ms; xa=$a ;;
		esac
	done < <(loads "$file")
	[ $nx -eq 1 ] || fail "$(basename "$file"): $nx executable LOAD segments, expected 1"
	[ "$xa" -ge $H ] || fail "$(basename "$file"): the executable segment's p_align is $xa, expected >= $H"
	[ $((xv % H)) -eq 0 ] || fail "$(basename "$file"): the executable segment starts at $(printf %#x "$xv"), not 2 MiB-aligned"
	[ $(((xv - xo) % H)) -eq 0 ] || fail "$(basename "$file"): address and file offset differ modulo 2 MiB"
	if [ "$mode" = strict ] || [ "$mode" = alone ]; then
		[ $((xo % H)) -eq 0 ] || fail "$(basename "$file"): the executable segment's file offset $(printf %#x "$xo") is not 2 MiB-aligned"
		[ $(((xv + xm) % H)) -eq 0 ] || fail "$(basename "$file"): the executable segment ends at $(printf %#x $((xv + xm))), not on a 2 MiB boundary (not padded)"
		[ "$xf" -eq "$xm" ] || fail "$(basename "$file"): p_filesz $xf != p_memsz $xm: the padding is not in the file"
		local lo=$xv hi=$((xv + xm))
		while read -r o v fs ms f a; do
			case $f in *E*) continue ;; esac
			[ "$mode" = alone ] || [ "$a" -ge $H ] || fail "$(basename "$file"): a LOAD segment has p_align $a < $H"
			local s=$((v & ~(H - 1))) e=$(((v + ms + H - 1) & ~(H - 1)))
			[ $e -le $lo ] || [ $s -ge $hi ] ||
				fail "$(basename "$file"): the $f segment at $(printf %#x "$v") shares a 2 MiB window with the executable segment"
		done < <(loads "$file")
		# every executable section inside the segment (.init, .plt*, .iplt,
		# .text.unlikely, .fini ...)
		local sn sa ss
		while read -r sn sa ss; do
			[ $((sa)) -ge $lo ] && [ $((sa + ss)) -le $hi ] ||
				fail "$(basename "$file"): executable section $sn [$(printf %#x $((sa))), $(printf %#x $((sa + ss)))) is outside the aligned segment"
		done < <(readelf -SW "$file" | sed 's/^ *\[ *[0-9]*\] *//' | awk '$7 ~ /X/ && $7 ~ /A/ { print $1, "0x" $3, "0x" $5 }')
		[ "$(readelf -SW "$file" | sed 's/^ *\[ *[0-9]*\] *//' | awk '$7 ~ /X/ && $7 ~ /A/' | wc -l)" -ge 3 ] ||
			fail "$(basename "$file"): fewer than 3 executable sections read back: the section check cannot tell"
		# hot code first
		local hot cold
		hot=$(nm "$file" | awk '$3 == "sample_hot" { print $1 }')
		cold=$(nm "$file" | awk '$3 == "sample_cold" { print $1 }')
		[ -n "$hot" ] && [ -n "$cold" ] || fail "$(basename "$file"): no sample_hot/sample_cold symbols"
		[ $((16#$hot)) -lt $((16#$cold)) ] || fail "$(basename "$file"): the hot function ($hot) is not before the cold one ($cold)"
		[ $((16#$hot - xv)) -lt 4096 ] || fail "$(basename "$file"): the hot function is $((16#$hot - xv)) bytes into the text, not at its start"
		echo "   ok: text [$(printf %#x "$xv"), $(printf %#x $((xv + xm)))) aligned and padded, alone in its windows; sample_hot at +$((16#$hot - xv))"
	else
		echo "   ok: text starts 2 MiB-aligned at $(printf %#x "$xv"), p_align $(printf %#x "$xa"), congruent; ends at $(printf %#x $((xv + xm))) ($(((xv + xm) % H)) bytes into its last window)"
	fi
}

# huge_share SMAPS START END — bytes of [START, END) on huge pages
# (PMD-mapped anonymous or file memory, or hugetlb) in a copy of
# /proc/PID/smaps, and the range's size: "HUGE SIZE"
huge_share() {
	awk -v s="$2" -v e="$3" '
	function hex(x,   i, c, v) { v = 0; x = tolower(x)
		for (i = 1; i <= length(x); i++) { c = index("0123456789abcdef", substr(x, i, 1)) - 1; v = v * 16 + c }
		return v }
	/^[0-9a-f]+-[0-9a-f]+ / { split($1, r, "-"); ms = hex(r[1]); me = hex(r[2]); inr = ms < e && me > s; next }
	inr && ($1 == "AnonHugePages:" || $1 == "FilePmdMapped:" || $1 == "Shared_Hugetlb:" || $1 == "Private_Hugetlb:") {
		# an entry reaching past the range counts no more than its overlap
		lo = ms > s ? ms : s; hi = me < e ? me : e; v = $2 * 1024; if (v > hi - lo) v = hi - lo; huge += v }
	END { printf "%d %d\n", huge, e - s }' "$1"
}

# run_huge NAME FILE(the object with the text) RUN... — runs RUN with
# SAMPLE_SMAPS set; from the hot function's address and FILE's program
# headers, the executable segment's range at run time; its huge share from
# the smaps copy must be 100%.  Prints one row of the table.
run_huge() {
	local name=$1 file=$2 hot nmhot xv xm o v fs ms f a base
	shift 2
	SAMPLE_SMAPS="$W/$name.smaps" "$@" >"$W/$name.out" 2>"$W/$name.err" ||
		fail "$name: the program failed: $(head -3 "$W/$name.err" "$W/$name.out")"
	grep -q '^sample ' "$W/$name.out" || fail "$name: no 'sample' line: $(head -3 "$W/$name.out")"
	hot=$(sed -n 's/^hot 0x\([0-9a-f]*\)$/\1/p' "$W/$name.out")
	[ -n "$hot" ] || fail "$name: the program did not print the hot function's address"
	nmhot=$(nm "$file" | awk '$3 == "sample_hot" { print $1 }')
	while read -r o v fs ms f a; do
		case $f in *E*) xv=$v; xm=$ms ;; esac
	done < <(loads "$file")
	base=$((16#$hot - 16#$nmhot))
	local s=$((base + xv)) e=$((base + xv + xm)) hk sk
	read -r hk sk < <(huge_share "$W/$name.smaps" $s $e)
	[ "${sk:-0}" -gt 0 ] || fail "$name: the executable segment's range [$s, $e) is empty"
	local why
	why=$(grep -m1 'enormoustext:' "$W/$name.err" | cut -c1-160)
	printf '   %-28s text [%#x, %#x) %7d of %7d bytes huge (%d%%)\n' "$name" $s $e "$hk" "$sk" $((100 * hk / sk))
	[ "$hk" -eq "$sk" ] || fail "$name: $hk of $sk bytes of the executable segment on huge pages, expected all (${why:-no line from the library})"
}

have_lld() { "$LT_CC" -fuse-ld=lld -x c - -o "$W/lldprobe" >/dev/null 2>&1 <<<'int main(void){return 0;}'; }

# aarch64_links MODE LDFLAGS... — sample.c cross-linked for aarch64 (bfd:
# PIE, non-PIE, shared library; lld, found through -B: PIE, shared
# library), each checked in MODE
aarch64_links() {
	local mode=$1 kind out CC64=aarch64-linux-gnu-gcc
	shift
	command -v $CC64 >/dev/null || skip "no $CC64 here (Debian: apt-get install gcc-aarch64-linux-gnu)"
	for kind in pie nopie dso; do
		out=a64-$kind
		link "$out" $CC64 $kind "$@" -Wl,--fatal-warnings
		readelf -h "$W/$out" | grep -q 'AArch64' || fail "$out is not an aarch64 file"
		check "$W/$out" "$mode"
	done
	if command -v ld.lld >/dev/null; then
		# the cross compiler finds lld through -B (it looks for ld.lld there)
		mkdir "$W/lldbin" && ln -s "$(command -v ld.lld)" "$W/lldbin/ld.lld"
		for kind in pie dso; do
			link "a64-lld-$kind" $CC64 $kind -B"$W/lldbin" -fuse-ld=lld "$@" -Wl,--fatal-warnings
			check "$W/a64-lld-$kind" "$mode"
		done
	else
		echo "-- (no ld.lld: the aarch64 lld links are not checked)"
	fi
}

# ---- shared by one family of tests ------------------------------------------

# layout_test LINKER (layout.bfd, layout.lld) — -T enormous.ld with the -z
# flags, --fatal-warnings: PIE, non-PIE, shared library, each checked
# strict; the executables run.
layout_test() {
	local L=$1 kind out
	for kind in pie nopie dso; do
		out=sample-$kind
		[ $kind = dso ] && out=libsample.so
		link "$out" "$LT_CC" $kind -fuse-ld="$L" "${FLAGS[@]}" "${SCRIPT[@]}" -Wl,--fatal-warnings
		check "$W/$out" strict
		if [ $kind != dso ]; then
			"$W/$out" | grep -q '^sample ' || fail "$out does not run"
		fi
	done
	# what the layout costs in file size, for the README
	link plain-pie "$LT_CC" pie -fuse-ld="$L"
	echo "-- file size: $(stat -c %s "$W/plain-pie") bytes by default, $(stat -c %s "$W/sample-pie") with enormous.ld"
}

# alone_test LINKER [ibt] (alone.bfd, alone.lld) — -T enormous.ld and no
# other flag: PIE, non-PIE, shared library, -static, -static-pie, each
# checked alone; the executables run; with ibt also a PIE with a second
# PLT (.plt.sec, -z ibtplt); a program linked against the shared library
# runs.
alone_test() {
	local L=$1 ibt=${2:-} kind out
	for kind in pie nopie dso static static-pie; do
		out=sample-$kind
		[ $kind = dso ] && out=libsample.so
		link "$out" "$LT_CC" $kind -fuse-ld="$L" "${SCRIPT[@]}" -Wl,--fatal-warnings
		check "$W/$out" alone
		if [ $kind != dso ]; then
			"$W/$out" | grep -q '^sample ' || fail "$out does not run"
		fi
	done
	# .plt.sec (IBT): the second PLT inside the aligned range too
	# (bfd: -z ibtplt; lld 14 makes one only when every input, Debian's crt
	# files included, is IBT-marked, and they are not)
	if [ "$ibt" = ibt ]; then
		link sample-ibt "$LT_CC" pie -fcf-protection -fuse-ld="$L" -Wl,-z,ibtplt "${SCRIPT[@]}" -Wl,--fatal-warnings
		readelf -SW "$W/sample-ibt" | grep -q '\.plt\.sec' || fail "sample-ibt has no .plt.sec: the IBT case is not tested"
		check "$W/sample-ibt" alone
	fi
	# a program that uses the library: loaded, it runs
	printf '%s\n' 'int sample_hot(int); int main(void) { return sample_hot(1) == 0; }' >"$W/use.c"
	echo "-- $LT_CC -fuse-ld=$L use.c -L. -lsample (the library linked with the script alone)"
	"$LT_CC" -fuse-ld="$L" "$W/use.c" -L"$W" -lsample -Wl,-rpath,"$W" -o "$W/use" >"$W/use.log" 2>&1 ||
		fail "linking a program against libsample.so failed: $(head -2 "$W/use.log")"
	"$W/use" || fail "a program using libsample.so (the script alone) did not run"
	link plain-pie "$LT_CC" pie -fuse-ld="$L"
	echo "-- file size: $(stat -c %s "$W/plain-pie") bytes by default, $(stat -c %s "$W/sample-pie") with enormous.ld alone"
}

# alternative_test LINKER FLAG... (alternative.*) — the flag-only layout,
# without the script: PIE, non-PIE, shared library linked with FLAGs, each
# checked flags; the executables run preloaded where LT_PRELOAD is a file.
alternative_test() {
	local L=$1 kind out
	shift
	for kind in pie nopie dso; do
		out=alt-$kind
		[ $kind = dso ] && out=libalt.so
		link "$out" "$LT_CC" $kind -fuse-ld="$L" "$@"
		check "$W/$out" flags
		# at run time the library pads the partial last window: all huge
		# (this text is less than the default pad threshold, 4096 bytes,
		# so 1 here; a real program's tail is more)
		if [ $kind != dso ] && [ -f "${LT_PRELOAD:-}" ]; then
			run_huge "alt.$L.$kind" "$W/$out" env LD_PRELOAD="$LT_PRELOAD" ENORMOUSTEXT_VERBOSE=1 \
				ENORMOUSTEXT_PAD_THRESHOLD=1 "$W/$out"
		fi
	done
}

# script_refused LINKER PACKAGE (gold.script, mold.script) — LINKER (from
# PACKAGE) cannot take enormous.ld: the link fails and the error names the
# script.
script_refused() {
	local L=$1 pkg=$2
	command -v ld.$L >/dev/null || skip "no $L here (Debian: apt-get install $pkg)"
	echo "-- $LT_CC -fuse-ld=$L ... -Wl,-T,enormous.ld (expected to fail: $L cannot take the script)"
	if "$LT_CC" -O2 "$LT_SOURCE" -fuse-ld=$L "${FLAGS[@]/separate-code/text}" "${SCRIPT[@]}" -o "$W/g" >"$W/g.log" 2>&1; then
		fail "$L accepted enormous.ld: the README's note on $L is wrong"
	fi
	sed 's/^/   | /' "$W/g.log"
	grep -qi 'enormous.ld' "$W/g.log" || fail "$L's error does not name the script"
}

# runtime_test LINKER (runtime.bfd, runtime.lld) — -T enormous.ld alone,
# gcc and clang drivers, PIE, non-PIE, shared library, -static,
# -static-pie, run with the library (preloaded, or libenormoustext.a for
# the static ones): the share of the executable segment on huge pages,
# read from smaps, must be 100%; the control (ENORMOUSTEXT=0) less.
runtime_test() {
	local L=$1 v drivers cc d first kind out ctl hot base o fs ms f a xv xm hk sk
	for v in LT_PRELOAD LT_STATIC; do
		[ -f "${!v:-}" ] || { echo "$T: $v (${!v:-unset}) is not a file: run through ctest after the build"; exit 2; }
	done
	drivers=("$LT_CC")
	if [ -n "${LT_CLANG:-}" ] && [ "$(basename "$LT_CC")" != clang ]; then drivers+=("$LT_CLANG"); elif [ -z "${LT_CLANG:-}" ]; then echo "-- (no clang: the clang driver is not checked)"; fi
	printf '%s\n' 'int sample_report(void); int sample_entry(int);' \
		'int main(int c, char **v) { (void)v; sample_entry(c); return sample_report() != 0; }' >"$W/use.c"
	for cc in "${drivers[@]}"; do
		d=$(basename "$cc"); [ "$d" = cc ] && d=gcc
		first=${first:-$d}
		for kind in pie nopie dso static static-pie; do
			out=$d-$kind
			case $kind in
			dso)
				out=lib$d-sample.so
				link "$out" "$cc" dso -fuse-ld="$L" "${SCRIPT[@]}" -Wl,--fatal-warnings
				check "$W/$out" alone
				"$cc" -fuse-ld="$L" "$W/use.c" "$W/$out" -Wl,-rpath,"$W" -o "$W/$d-use" >"$W/use.log" 2>&1 ||
					fail "linking a program against $out failed: $(head -2 "$W/use.log")"
				run_huge "$d.$L.dso" "$W/$out" env LD_PRELOAD="$LT_PRELOAD" ENORMOUSTEXT_VERBOSE=1 "$W/$d-use"
				;;
			static | static-pie)
				# the library's archive, whole (its constructor does the work)
				link "$out" "$cc" $kind -fuse-ld="$L" "${SCRIPT[@]}" -Wl,--whole-archive "$LT_STATIC" \
					-Wl,--no-whole-archive -Wl,--fatal-warnings
				check "$W/$out" alone
				run_huge "$d.$L.$kind" "$W/$out" env ENORMOUSTEXT_VERBOSE=1 "$W/$out"
				;;
			*)
				link "$out" "$cc" $kind -fuse-ld="$L" "${SCRIPT[@]}" -Wl,--fatal-warnings
				check "$W/$out" alone
				run_huge "$d.$L.$kind" "$W/$out" env LD_PRELOAD="$LT_PRELOAD" ENORMOUSTEXT_VERBOSE=1 "$W/$out"
				;;
			esac
		done
	done
	# the control: the same program with the library turned off keeps its
	# text small, and the measurement says so
	ctl=$W/$first-pie
	SAMPLE_SMAPS="$W/off.smaps" LD_PRELOAD="$LT_PRELOAD" ENORMOUSTEXT=0 "$ctl" >"$W/off.out" 2>&1 ||
		fail "the program with ENORMOUSTEXT=0 failed"
	hot=$(sed -n 's/^hot 0x\([0-9a-f]*\)$/\1/p' "$W/off.out")
	base=$((16#$hot - 16#$(nm "$ctl" | awk '$3 == "sample_hot" { print $1 }')))
	while read -r o v fs ms f a; do case $f in *E*) xv=$v; xm=$ms ;; esac; done < <(loads "$ctl")
	read -r hk sk < <(huge_share "$W/off.smaps" $((base + xv)) $((base + xv + xm)))
	echo "-- the control, ENORMOUSTEXT=0: $hk of $sk bytes huge"
	[ "$sk" -gt 0 ] && [ "$hk" -lt "$sk" ] || fail "with the library off the text measured $hk of $sk KiB huge: the measurement cannot tell"
}
