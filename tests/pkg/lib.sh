# tests/pkg/lib.sh — what the package tests share (deb.sh, rpm.sh): the
# test program and the check that a packaged library, preloaded, puts its
# text on huge pages.  Sourced first, with ET_TEST_NAME set (pkg.deb,
# pkg.rpm); it sources tests/lib/lib.sh (strict mode, fail / skip / pass,
# at_exit, et_workdir, et_clear_env, wait_line / wait_until).  The caller
# defines lap() and W (its work directory) before calling the functions.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/lib.sh"

# pkg_copy_tree SRC DEST: the files of the tree SRC (git's tracked and
# untracked-but-not-ignored ones; outside git everything but build*/, .git
# and obj-*) copied into DEST, so that a package build writes nothing into
# SRC.  pkg_tree_digest DIR: one sha256 of DIR's file names, modes and
# bytes (symbolic links by their targets' names): two copies of the same
# tree have the same digest (tests/deploy/debs.sh leaves its build with the
# digest of its copy; deb.sh reuses that build only for the same digest).
pkg_copy_tree() {
	local from=$1 to=$2
	mkdir -p "$to" || fail "cannot make $to"
	if git -C "$from" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$from" && git ls-files -z -co --exclude-standard |
			while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
			tar -cf - --null -T -) | tar -xf - -C "$to" || fail "cannot copy $from (git ls-files) to $to"
	else
		(cd "$from" && tar -cf - --exclude='./build*' --exclude=./.git --exclude='./obj-*' .) |
			tar -xf - -C "$to" || fail "cannot copy $from to $to"
	fi
}
pkg_tree_digest() {
	(cd "$1" && {
		find . ! -type d -printf '%m %y %p -> %l\n' | LC_ALL=C sort
		find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
	} | sha256sum | cut -d' ' -f1)
}

# pkg_program: writes $W/big.c and builds $W/big.  pkg_preloaded LIB: runs
# $W/big without the library (nothing huge) and with LIB preloaded
# (ENORMOUSTEXT_VERBOSE=1): the summary line in $sum, at least 4 MiB moved,
# and the program's own smaps agree.  fresh_run FILE COMMAND...: COMMAND...
# ./prog on a fresh copy of FILE; $OUT, $ERR, $RC.  pkg_command CMD LIBDIR:
# the installed command says its version ($version) and `run` preloads the
# library in LIBDIR, beside it (BINDIR/../LIBDIR).
pkg_program() {
	# A program with 1600 functions a page apart (6.3 MiB of text: at least two
	# whole 2 MiB windows wherever it is put); with -DWITH_API it also asks the
	# library.  It prints how much of its own executable mappings is huge.
	n=1600
	{
		printf '#include <stdio.h>\n#include <string.h>\n#ifdef WITH_API\n#include <enormoustext.h>\n#endif\n'
		printf '#define F static __attribute__((aligned(4096), noinline, used)) unsigned long\n'
		for ((i = 0; i < n; i++)); do printf 'F f%d(unsigned long x) { return (x ^ %du) + %du; }\n' $i $((i * 40503 % 65536)) $i; done
		printf 'static unsigned long (*const table[])(unsigned long) = {\n'
		for ((i = 0; i < n; i++)); do printf 'f%d,' $i; done
		cat <<'C'
};
static long huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	long kb = 0, v;
	int x = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		char perms[8], field[64];
		if (sscanf(line, "%*[0-9a-f]-%*[0-9a-f] %7s", perms) == 1 && strchr(line, '-') < strchr(line, ' ')) {
			x = perms[2] == 'x';
			continue;
		}
		if (x && sscanf(line, "%63[A-Za-z_]: %ld kB", field, &v) == 2 &&
		    (!strcmp(field, "AnonHugePages") || !strcmp(field, "FilePmdMapped") ||
		     !strcmp(field, "Private_Hugetlb") || !strcmp(field, "Shared_Hugetlb")))
			kb += v;
	}
	fclose(f);
	return kb;
}
int main(void)
{
	unsigned wrong = 0, i, n = sizeof table / sizeof table[0];
	for (i = 0; i < n; i++)
		if (table[i](i) != ((i ^ (i * 40503u % 65536u)) + i))
			wrong++;
	printf("calls=%u wrong=%u huge_kb=%ld\n", n, wrong, huge_kb());
#ifdef WITH_API
	struct enormoustext_stats st = { .size = sizeof st };
	int rc = enormoustext_get_stats(&st);
	printf("api rc=%d ran=%u huge_bytes=%llu version=%s header=%s\n", rc, st.ran,
	       (unsigned long long)st.huge_bytes, enormoustext_version(), ENORMOUSTEXT_VERSION_STRING);
#endif
	return wrong != 0;
}
C
	} >"$W/big.c"
	cc -O1 -o "$W/big" "$W/big.c" 2>"$W/cc.err" || { cat "$W/cc.err"; fail "cannot compile the test program"; }
}

kb() { sed -n 's/.*huge_kb=\([0-9-]*\).*/\1/p' <<<"$1"; }
# runs COMMAND... on a fresh copy of the program FILE: $OUT, $ERR, $RC
N=0
fresh_run() {
	local file=$1
	shift
	N=$((N + 1))
	mkdir "$W/run$N" || exit 2
	cp "$file" "$W/run$N/prog" || fail "cannot copy $file"
	OUT=$(cd "$W/run$N" && "$@" ./prog 2>"$W/run$N.err")
	RC=$?
	ERR=$(cat "$W/run$N.err")
}

pkg_preloaded() {
	local lib=$1
	fresh_run "$W/big" env
	[ $RC = 0 ] || fail "the test program failed without the library: $OUT $ERR"
	[ "$(kb "$OUT")" = 0 ] || fail "without the library $(kb "$OUT") kB of the program's text is already huge: nothing could be shown ($OUT)"
	fresh_run "$W/big" env LD_PRELOAD="$lib" ENORMOUSTEXT_VERBOSE=1
	echo "  preloaded: $OUT"
	echo "  preloaded: $ERR"
	[ $RC = 0 ] || fail "the program preloaded with $lib failed (status $RC): $OUT $ERR"
	case $OUT in *" wrong=0 "*) ;; *) fail "the program computed wrong results with the library: $OUT" ;; esac
	sum=$(grep -E '^enormoustext: [0-9]+ of [0-9]+ objects?, ' <<<"$ERR")
	[ "$(echo "$sum" | grep -c .)" = 1 ] || fail "ENORMOUSTEXT_VERBOSE=1: not one summary line on stderr: $ERR"
	moved=$(sed -n 's/^enormoustext: [0-9]* of [0-9]* objects*, \([0-9.]*\) MiB of [0-9.]* MiB text on .*/\1/p' <<<"$sum")
	[ -n "$moved" ] || fail "the summary line does not say how much text went huge: $sum"
	awk -v m="$moved" 'BEGIN { exit !(m + 0 >= 4) }' || fail "the summary line says $moved MiB moved, at least 4 expected: $sum"
	[ "$(kb "$OUT")" -ge 4096 ] || fail "the summary says $moved MiB but the program's smaps shows $(kb "$OUT") kB huge"
}

pkg_command() {
	local cmd=$1 libdir=$2 v dry
	v=$("$cmd" --version) || fail "$cmd --version failed"
	[ "$v" = "enormoustext $version" ] || fail "$cmd --version says '$v', not 'enormoustext $version'"
	dry=$("$cmd" run -n -- true) || fail "$cmd run -n -- true failed: $dry"
	# (the directory resolved, the file name as it is)
	grep -qxF "LD_PRELOAD=$(realpath "$libdir")/libenormoustext.so.0" <<<"$dry" ||
		fail "the installed command does not preload the library beside it ($libdir): $dry"
}
