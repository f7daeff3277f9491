/*
 * test_next.c — os/next.c's own lookup of the next definition of a name
 * (the loader's list, GNU hash tables, default versions) against the
 * loader's answer, dlsym(RTLD_NEXT), for every name the library's wrappers
 * and its own calls to libc look up, names with an old version beside the
 * default one, an IFUNC (left to dlsym); from a vfork child and a fork of
 * a threaded process, where dlsym is not safe; and a name no object
 * defines.
 */
#include "unit_util.h"

#include "os/os.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

TestSuite(next, .timeout = 30);

/* what the library looks up (interpose/, os/perf.c, os/thread.c) */
static const char *const k_names[] = {
	"mmap", "mmap64", "mprotect", "prctl", "unshare", "setns", "chroot", "syscall", "sigaction",
	"pthread_create", "dlopen", "dlmopen", "dlclose", "fork", "system", "popen",
	/* and names glibc defines in an old version at another address
	 * beside the default one: the default is the answer */
	"pthread_cond_wait", "realpath", "timer_create",
};
#define NNAMES (sizeof k_names / sizeof k_names[0])

Test(next, same_as_the_loader)
{
	size_t own = 0;
	for (size_t i = 0; i < NNAMES; i++) {
		void *mine = et_os_next_own(k_names[i]);
		void *theirs = dlsym(RTLD_NEXT, k_names[i]);
		/* NULL: it would ask dlsym, which is always right */
		if (mine) {
			own++;
			cr_expect_eq(mine, theirs, "%s: own lookup %p, dlsym(RTLD_NEXT) %p", k_names[i], mine, theirs);
		}
		void *cache = NULL;
		cr_expect_eq(et_os_next(&cache, k_names[i]), theirs, "%s: et_os_next differs from dlsym", k_names[i]);
		cr_expect_eq(cache, theirs, "%s: not kept", k_names[i]);
	}
#ifdef __GLIBC__
	/* with glibc every one of them is settled without the loader (a
	 * lookup that gave up on all would pass the loop above) */
	cr_expect_eq(own, NNAMES, "the own lookup settled %zu of %zu names", own, NNAMES);
#endif
}

/* an IFUNC (glibc's memcpy@@GLIBC_2.14; its old version is a plain
 * function at another address): left to dlsym, which runs the resolver.
 * Where the next memcpy is not libc's (a sanitizer's runtime, loaded
 * first, defines its own), the answers must agree. */
Test(next, an_ifunc_is_the_loaders)
{
	void *theirs = dlsym(RTLD_NEXT, "memcpy");
	void *mine = et_os_next_own("memcpy");
	Dl_info di;
	bool libc = dladdr(theirs, &di) && di.dli_fname && strstr(di.dli_fname, "libc.so");
#ifdef __GLIBC__
	if (libc)
		cr_expect_null(mine, "memcpy: the own lookup answered an IFUNC (or its old version)");
#endif
	if (!libc) {
		cr_log_info("the next memcpy is %s's, not libc's: the IFUNC case is not met here",
		            di.dli_fname ? di.dli_fname : "?");
		if (mine)
			cr_expect_eq(mine, theirs, "memcpy: own lookup %p, dlsym(RTLD_NEXT) %p", mine, theirs);
	}
	void *cache = NULL;
	cr_expect_eq(et_os_next(&cache, "memcpy"), theirs);
}

Test(next, a_name_nobody_defines)
{
	cr_expect_null(et_os_next_own("et_no_object_defines_this_name"));
	void *cache = NULL;
	cr_expect_null(et_os_next(&cache, "et_no_object_defines_this_name"));
}

/* the answers in a child: a vfork child (the parent's memory, its stack
 * borrowed) and the fork of a process with a second thread that holds
 * nothing of ours; status 0 where every answer equals the parent's */
static void *g_expect[NNAMES];

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int check_in_child(void)
{
	for (size_t i = 0; i < NNAMES; i++) {
		void *mine = et_os_next_own(k_names[i]);
		if (mine && mine != g_expect[i])
			return 1 + (int)i;
	}
	return 0;
}

Test(next, in_a_vfork_child_and_after_fork)
{
	for (size_t i = 0; i < NNAMES; i++)
		g_expect[i] = dlsym(RTLD_NEXT, k_names[i]);
	int st = 0;
	pid_t p = vfork();
	if (p == 0)
		_exit(check_in_child());
	cr_assert_gt(p, 0, "vfork failed");
	cr_assert_eq(waitpid(p, &st, 0), p);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "vfork child: name %d answered differently", WEXITSTATUS(st) - 1);

	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, sleeper, NULL), 0);
	p = fork();
	if (p == 0)
		_exit(check_in_child());
	cr_assert_gt(p, 0, "fork failed");
	cr_assert_eq(waitpid(p, &st, 0), p);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork child: name %d answered differently", WEXITSTATUS(st) - 1);
	pthread_cancel(t);
	pthread_join(t, NULL);
}

/* et_os_defined_elsewhere (runtime/other.c's first look for another copy
 * of the library): 0 only where no other loaded object defines the name;
 * a name libc defines, or one this object alone defines, answered as the
 * loader would have it */
Test(next, defined_elsewhere)
{
#if defined(__GLIBC__) && defined(__x86_64__)
	/* every object here has a GNU hash table: the walk settles it */
	cr_expect_eq(et_os_defined_elsewhere("et_no_object_defines_this_name"), 0,
	             "a name nobody defines: not 'elsewhere'");
#else
	/* (musl: the walk is glibc's; elsewhere an object without a GNU hash
	 * table, qemu's, say, leaves it to dlsym: 1 is the safe answer) */
	int r = et_os_defined_elsewhere("et_no_object_defines_this_name");
	cr_expect(r == 0 || r == 1);
#endif
	cr_expect_eq(et_os_defined_elsewhere("pthread_create"), 1, "libc's pthread_create not seen");
	cr_expect_eq(et_os_defined_elsewhere("timer_create"), 1, "libc's timer_create not seen");
	/* the answer 0 must mean what dlsym says */
	cr_expect_null(dlsym(RTLD_DEFAULT, "et_no_object_defines_this_name"));
}

/* et_os_read_small: a file read whole with the library's own calls */
Test(next, read_small)
{
	char path[] = "/tmp/et_unit_read_small.XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	static const char text[] = "Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t1\n";
	cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	char buf[64];
	memset(buf, 'z', sizeof buf);
	cr_expect_eq(et_os_read_small(path, buf, sizeof buf), (long)(sizeof text - 1));
	cr_expect_str_eq(buf, text);
	char small[8];
	cr_expect_eq(et_os_read_small(path, small, sizeof small), 7, "not cut at cap - 1");
	cr_expect_str_eq(small, "Name:\tx");
	cr_expect_eq(et_os_read_small(path, small, 0), -EINVAL);
	unlink(path);
	cr_expect_eq(et_os_read_small(path, buf, sizeof buf), -ENOENT);
	cr_expect_eq(et_os_read_small("/proc/self/status", buf, sizeof buf), (long)sizeof buf - 1, "a /proc file read short");
	cr_expect(strncmp(buf, "Name:", 5) == 0, "the status file starts '%.10s'", buf);
}
