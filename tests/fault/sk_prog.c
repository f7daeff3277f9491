/*
 * sk_prog — the program of fault.seccomp-kill: 8 MiB of text of its own (the
 * integration tests' generated functions), called and checked, that can
 * sandbox itself with a seccomp filter whose action is to kill the process
 * (as a program that calls libseccomp's seccomp_load, or prctl, does).
 *
 *   sk_prog [--hold MS] [--dlopen LIB [--dlopen-at MS]]
 *           [--kill RULE]... [--filter-at main|MS] [--how seccomp|tsync|prctl]
 *           [--strict]
 *
 *   --hold MS      keep calling the functions for MS milliseconds of wall
 *                  time (from the start of main)
 *   --dlopen LIB   dlopen LIB (a libbigtext.so copy, 12 MiB of text) at
 *                  --dlopen-at MS (default: the middle of the hold; at once
 *                  without one) and call and check its functions from then on;
 *                  always after a late filter of --filter-at MS (the main
 *                  thread waits for the thread's), and at the end of the
 *                  hold at the latest (a loaded machine)
 *   --kill RULE    a rule of the filter (sk_filter.h: SYSCALL[/argI=V][:ACTION],
 *                  kill by default); with none, no filter
 *   --filter-at    main: first thing in main; MS: that many milliseconds
 *                  into the hold
 *   --how          seccomp: syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0)
 *                  from the main thread (the default);
 *                  tsync: the same with SECCOMP_FILTER_FLAG_TSYNC (every
 *                  thread of the process gets the filter); at MS it is made
 *                  by a thread of the program's own, started first thing
 *                  in main, that sleeps until then (and then stays, in
 *                  pause(), until the process exits: the main thread waits
 *                  for its result before printing);
 *                  prctl: prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) from
 *                  the main thread (that thread only)
 *                  Each calls prctl(PR_SET_NO_NEW_PRIVS) first, on the same
 *                  thread.  All through libc (syscall(), prctl()): never an
 *                  inline system call.
 *   --strict       after printing the results: prctl(PR_SET_SECCOMP,
 *                  SECCOMP_MODE_STRICT) and syscall(SYS_exit, 0) (the main
 *                  thread ends; without other threads, the process, with 0;
 *                  not with --filter-at MS --how tsync, whose thread stays)
 *
 * Prints only what it computed and whether the filter went in (no
 * addresses, no timing): a run with the library must print the same as
 * one without.  Exit 0, 1 when a result was wrong, 2 on a bad argument,
 * 3 when strict mode could not be entered.
 */
#include "sk_filter.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"
#include "../lib/et_test.h"   /* et_round_all */

static struct sk_rule g_rules[SK_MAX_RULES];
static int g_nrules;
static struct sock_filter g_f[4 + 5 * SK_MAX_RULES];
static struct sock_fprog g_prog;
static struct timespec g_start;
static long g_at_ms;
static int g_result = -1;   /* 0 installed, an errno, -1 not yet */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_done = PTHREAD_COND_INITIALIZER;

static double since_start_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - g_start.tv_sec) * 1e3 + (double)(t.tv_nsec - g_start.tv_nsec) / 1e6;
}

static int install(const char *how)
{
	long r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	if (!strcmp(how, "prctl"))
		r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &g_prog, 0, 0);
	else
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    !strcmp(how, "tsync") ? SECCOMP_FILTER_FLAG_TSYNC : 0, &g_prog);
	if (r > 0)          /* TSYNC: the id of a thread that could not be synchronised */
		return ESRCH;
	return r == 0 ? 0 : errno;
}

static void *late_thread(void *arg)
{
	(void)arg;
	struct timespec t = g_start;
	t.tv_sec += g_at_ms / 1000;
	t.tv_nsec += (g_at_ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
	int r = install("tsync");
	pthread_mutex_lock(&g_lock);
	g_result = r;
	pthread_cond_signal(&g_done);
	pthread_mutex_unlock(&g_lock);
	/* stays until the process exits: a thread that ends frees its stack
	 * (madvise MADV_DONTNEED), a call the program would make after the
	 * filter and otherwise never */
	for (;;)
		pause();
	return NULL;
}

/* until the thread's filter went in (or failed) */
static void wait_thread(void)
{
	pthread_mutex_lock(&g_lock);
	while (g_result == -1)
		pthread_cond_wait(&g_done, &g_lock);
	pthread_mutex_unlock(&g_lock);
}

int main(int argc, char **argv)
{
	long hold_ms = 0, dlopen_ms = -1;
	const char *lib = NULL, *how = "seccomp", *at = NULL;
	bool strict = false;

	clock_gettime(CLOCK_MONOTONIC, &g_start);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--dlopen") && i + 1 < argc)
			lib = argv[++i];
		else if (!strcmp(argv[i], "--dlopen-at") && i + 1 < argc)
			dlopen_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--kill") && i + 1 < argc) {
			if (g_nrules == SK_MAX_RULES || sk_parse_rule("sk_prog", argv[++i], &g_rules[g_nrules]) != 0)
				return 2;
			g_nrules++;
		} else if (!strcmp(argv[i], "--filter-at") && i + 1 < argc)
			at = argv[++i];
		else if (!strcmp(argv[i], "--how") && i + 1 < argc)
			how = argv[++i];
		else if (!strcmp(argv[i], "--strict"))
			strict = true;
		else {
			fprintf(stderr, "sk_prog: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (strcmp(how, "seccomp") && strcmp(how, "tsync") && strcmp(how, "prctl")) {
		fprintf(stderr, "sk_prog: --how seccomp|tsync|prctl\n");
		return 2;
	}
	if (dlopen_ms < 0)
		dlopen_ms = hold_ms / 2;
	bool late = false, filter = g_nrules > 0;
	pthread_t th;
	bool thread = false;
	if (filter) {
		g_prog.len = sk_build(g_rules, g_nrules, g_f);
		g_prog.filter = g_f;
		if (!at || !strcmp(at, "main")) {
			g_result = install(how);
			at = "main";
		} else {
			g_at_ms = atol(at);
			late = true;
			if (!strcmp(how, "tsync")) {
				int e = pthread_create(&th, NULL, late_thread, NULL);
				if (e) {
					fprintf(stderr, "sk_prog: pthread_create: %s\n", strerror(e));
					return 2;
				}
				thread = true;
				late = false;
			}
		}
	}

	unsigned wrong = et_round_all(), ln = 0;
	const bt_fn *lt = NULL;
	/* the filter, then the dlopen, whatever the load on the machine: each
	 * is also made after the hold if its time came in the last round, and
	 * the dlopen waits for the thread's filter */
	for (bool first = true, more = true; more; first = false) {
		more = since_start_ms() < (double)hold_ms;
		if (late && (!more || since_start_ms() >= (double)g_at_ms)) {
			g_result = install(how);
			late = false;
		}
		if (lib && !lt && (!more || since_start_ms() >= (double)dlopen_ms)) {
			if (thread)
				wait_thread();
			void *h = dlopen(lib, RTLD_NOW);
			const bt_fn *(*get)(unsigned *) = h ? (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table") : NULL;
			if (!get) {
				printf("dlopen %s: failed\n", lib);
				lib = NULL;
			} else {
				lt = get(&ln);
			}
		}
		for (unsigned i = 0; lt && i < ln; i++) {
			uint64_t x = bt_arg(BT_OBJ_LIB, i);
			if (lt[i](x) != bt_expect(BT_OBJ_LIB, i, x))
				wrong++;
		}
		if (!first || hold_ms > 0)
			wrong += et_round_all();
	}
	if (thread)
		wait_thread();
	if (filter)
		printf("filter (%s, %s): %s\n", at, how, g_result == 0 ? "installed" : strerror(g_result));
	if (lt)
		printf("dlopen: %u functions called\n", ln);
	printf("functions: %u, %s\n", bt_exe_count, wrong ? "WRONG results" : "all results right");
	fflush(stdout);
	if (strict) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) {
			fprintf(stderr, "sk_prog: strict mode: %s\n", strerror(errno));
			return 3;
		}
		syscall(SYS_exit, wrong ? 1 : 0);
	}
	return wrong ? 1 : 0;
}
