#!/bin/bash
# run.sh TEST — link-time layout tests of linker-scripts/enormous.ld (run
# through ctest; see README.md in this folder).  Each test links
# sample.c with a linker and reads the program headers back:
#
#   alone.bfd alone.lld         -T enormous.ld and nothing else: PIE, non-PIE,
#                               shared library, -static, -static-pie
#   alone.aarch64               the same, cross-linked for aarch64 (bfd, lld)
#   layout.bfd layout.lld       -T enormous.ld + -z max-page-size=0x200000
#                               -z separate-code: PIE, non-PIE, shared library
#   layout.aarch64              the same, cross-linked for aarch64 (bfd, lld)
#   alternative.bfd .lld .gold  the flag-only layout, without the script
#                               (lld also with -z separate-loadable-segments)
#   gold.script                 gold cannot take the script (no INSERT)
#
# Environment (from CMakeLists.txt): LT_CC (the C compiler), LT_SCRIPT
# (enormous.ld), LT_SOURCE (sample.c), LT_WORK_ROOT.
# Exit: 0 pass, 1 fail, 77 skip (a linker or cross compiler is missing).
set -u
T=${1:?usage: run.sh TEST}
for v in LT_CC LT_SCRIPT LT_SOURCE LT_WORK_ROOT; do
	[ -n "${!v:-}" ] || { echo "run.sh: $v is not set: run the tests through ctest"; exit 2; }
done
H=$((0x200000))
mkdir -p "$LT_WORK_ROOT" || exit 2
W=$(mktemp -d "$LT_WORK_ROOT/$T.XXXXXX") || exit 2
trap 'rm -rf "$W"' EXIT

fail() { echo "FAIL [$T]: $*"; exit 1; }
skip() { echo "SKIP [$T]: $*"; exit 77; }
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

case $T in
layout.bfd | layout.lld)
	L=${T#layout.}
	[ "$L" = lld ] && ! have_lld && skip "no lld here (Debian: apt-get install lld)"
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
	;;

alone.bfd | alone.lld)
	L=${T#alone.}
	[ "$L" = lld ] && ! have_lld && skip "no lld here (Debian: apt-get install lld)"
	for kind in pie nopie dso static static-pie; do
		out=sample-$kind
		[ $kind = dso ] && out=libsample.so
		link "$out" "$LT_CC" $kind -fuse-ld="$L" "${SCRIPT[@]}" -Wl,--fatal-warnings
		check "$W/$out" alone
		if [ $kind != dso ]; then
			"$W/$out" | grep -q '^sample ' || fail "$out does not run"
		fi
	done
	# a program that uses the library: loaded, it runs
	printf '%s\n' 'int sample_hot(int); int main(void) { return sample_hot(1) == 0; }' >"$W/use.c"
	echo "-- $LT_CC -fuse-ld=$L use.c -L. -lsample (the library linked with the script alone)"
	"$LT_CC" -fuse-ld="$L" "$W/use.c" -L"$W" -lsample -Wl,-rpath,"$W" -o "$W/use" >"$W/use.log" 2>&1 ||
		fail "linking a program against libsample.so failed: $(head -2 "$W/use.log")"
	"$W/use" || fail "a program using libsample.so (the script alone) did not run"
	link plain-pie "$LT_CC" pie -fuse-ld="$L"
	echo "-- file size: $(stat -c %s "$W/plain-pie") bytes by default, $(stat -c %s "$W/sample-pie") with enormous.ld alone"
	;;

alone.aarch64) aarch64_links alone "${SCRIPT[@]}" ;;

layout.aarch64) aarch64_links strict "${FLAGS[@]}" "${SCRIPT[@]}" ;;

alternative.bfd | alternative.lld | alternative.gold)
	L=${T#alternative.}
	flags=("${FLAGS[@]}")
	case $L in
	lld) have_lld || skip "no lld here (Debian: apt-get install lld)" ;;
	gold)
		command -v ld.gold >/dev/null || skip "no gold here (Debian: binutils)"
		flags=(-Wl,-z,max-page-size=0x200000)   # gold has no -z separate-code
		;;
	esac
	for kind in pie nopie dso; do
		out=alt-$kind
		[ $kind = dso ] && out=libalt.so
		link "$out" "$LT_CC" $kind -fuse-ld="$L" "${flags[@]}"
		check "$W/$out" flags
	done
	if [ "$L" = lld ]; then
		# lld's other flag: every segment on its own pages, in the file too
		for kind in pie dso; do
			link "alt-sls-$kind" "$LT_CC" $kind -fuse-ld=lld -Wl,-z,max-page-size=0x200000 \
				-Wl,-z,separate-loadable-segments
			check "$W/alt-sls-$kind" flags
		done
	fi
	;;

gold.script)
	command -v ld.gold >/dev/null || skip "no gold here (Debian: binutils)"
	echo "-- $LT_CC -fuse-ld=gold ... -Wl,-T,enormous.ld (expected to fail: gold has no INSERT)"
	if "$LT_CC" -O2 "$LT_SOURCE" -fuse-ld=gold "${FLAGS[@]/separate-code/text}" "${SCRIPT[@]}" -o "$W/g" >"$W/g.log" 2>&1; then
		fail "gold accepted enormous.ld: the README's note on gold is wrong"
	fi
	sed 's/^/   | /' "$W/g.log"
	grep -qi 'enormous.ld' "$W/g.log" || fail "gold's error does not name the script"
	;;

*)
	echo "run.sh: unknown test '$T'"
	exit 2
	;;
esac
echo "PASS [$T]"
