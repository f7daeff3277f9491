/*
 * fork_test.c — moved text and fork/exec.
 *
 *   fork_test LIB              dlopen LIB (a libbigtext.so copy); fork: the
 *                              child sees the same huge pages, shared with the
 *                              parent (smaps Shared_* = the windows, Private_* =
 *                              0), and its calls are right; then fork + exec of
 *                              this program (--exec-child): the library runs
 *                              afresh in the new image and moves LIB again
 *   fork_test --fork-ctor FORKLIB LIB
 *                              FORKLIB's constructor forks (its child calls its
 *                              code and exits); the dlopen completes, LIB huge
 * Exit 0 pass, 1 fail.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bigtext.h"
#include "it_text.h"

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int calls_right(void *h)
{
	const bt_fn *(*table_of)(unsigned *) = (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table");
	unsigned n = 0;
	if (!table_of)
		return 0;
	const bt_fn *t = table_of(&n);
	for (unsigned i = 0; i < n; i++)
		if (t[i](bt_arg(BT_OBJ_LIB, i)) != bt_expect(BT_OBJ_LIB, i, bt_arg(BT_OBJ_LIB, i)))
			return 0;
	return n > 0;
}

/* Load LIB and check that its windows are huge; returns the handle. */
static void *load_huge(const char *who, const char *lib, struct it_huge *r)
{
	void *h = dlopen(lib, RTLD_NOW);
	uintptr_t lo, hi;
	if (!h || !et_find_text(base(lib), ET_SEG_FILESZ, &lo, &hi)) {
		printf("fork_test: %s: FAIL: cannot load %s: %s\n", who, lib, h ? "not found" : dlerror());
		return NULL;
	}
	it_huge_of(lo, hi, it_pmd_size(), r);
	uint64_t huge = r->anon + r->file + r->hugetlb;
	printf("fork_test: %s: %s: %llu of %llu eligible bytes huge; shared %llu, private %llu\n", who,
	       base(lib), (unsigned long long)huge, (unsigned long long)r->eligible,
	       (unsigned long long)r->shared, (unsigned long long)r->private_);
	if (!r->eligible || huge * 100 < r->eligible * 95) {
		printf("fork_test: %s: FAIL: %s is not huge\n", who, base(lib));
		return NULL;
	}
	if (!calls_right(h)) {
		printf("fork_test: %s: FAIL: wrong results\n", who);
		return NULL;
	}
	return h;
}

static int wait_ok(pid_t pid, const char *what)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		printf("fork_test: FAIL: %s did not pass (status %#x)\n", what, st);
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct it_huge r;
	if (argc == 3 && !strcmp(argv[1], "--exec-child"))
		return load_huge("exec'd child", argv[2], &r) ? 0 : 1;
	if (argc == 4 && !strcmp(argv[1], "--fork-ctor")) {
		void *f = dlopen(argv[2], RTLD_NOW);
		if (!f) {
			printf("fork_test: FAIL: dlopen %s: %s\n", argv[2], dlerror());
			return 1;
		}
		int (*status)(void) = (int (*)(void))dlsym(f, "fork_ctor_status");
		int s = status ? status() : -1;
		printf("fork_test: the constructor's child exited with %d\n", s);
		if (s != 0)
			return 1;
		return load_huge("after a forking constructor", argv[3], &r) ? 0 : 1;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: fork_test LIB | --fork-ctor FORKLIB LIB | --exec-child LIB\n");
		return 2;
	}
	const char *lib = argv[1];
	void *h = load_huge("parent", lib, &r);
	if (!h)
		return 1;
	uint64_t eligible = r.eligible;
	int fds[2];
	if (pipe(fds) != 0)
		return 1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[1]);
		uintptr_t lo, hi;
		struct it_huge c;
		memset(&c, 0, sizeof c);
		int ok = et_find_text(base(lib), ET_SEG_FILESZ, &lo, &hi) && it_huge_of(lo, hi, it_pmd_size(), &c) == 0;
		printf("fork_test: child: %llu of %llu eligible bytes huge; shared %llu, private %llu\n",
		       (unsigned long long)(c.anon + c.file + c.hugetlb), (unsigned long long)c.eligible,
		       (unsigned long long)c.shared, (unsigned long long)c.private_);
		fflush(stdout);
		if (!ok || c.anon + c.file + c.hugetlb < eligible) {
			printf("fork_test: child: FAIL: the text is not huge in the child\n");
			_exit(1);
		}
		if (c.shared < eligible || c.private_ != 0) {
			printf("fork_test: child: FAIL: the huge text is not shared with the parent\n");
			_exit(1);
		}
		if (!calls_right(h)) {
			printf("fork_test: child: FAIL: wrong results\n");
			_exit(1);
		}
		char b;
		if (read(fds[0], &b, 1) < 0) /* the parent stays alive until we looked */
			_exit(1);
		_exit(0);
	}
	close(fds[0]);
	fflush(stdout);
	int ok = 1;
	/* Give the child time to look while we are alive, then let it go. */
	usleep(200000);
	if (write(fds[1], "x", 1) != 1)
		ok = 0;
	ok &= wait_ok(pid, "the forked child");

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "--exec-child", lib, (char *)NULL);
		_exit(127);
	}
	ok &= wait_ok(pid, "the exec'd child");
	printf("fork_test: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
