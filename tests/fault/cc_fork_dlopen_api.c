/*
 * cc_fork_dlopen_api.c — fork × dlopen × the stats API, all at once.
 *
 *   cc_fork_dlopen_api [--seconds S] [--stall S] [--no-child-api] LIB_A LIB_B
 *
 * Six threads for S seconds (default 10):
 *   dlopen-0, dlopen-1  dlopen LIB_A (resp. LIB_B: big libraries with a
 *                       constructor, cc_ctor_lib.c), check the constructor
 *                       ran right, call some of their functions, dlclose;
 *   api-0, api-1        enormoustext_get_stats, _object_count, _get_object
 *                       (when the library is in the process; plainly these
 *                       calls are skipped) and a dl_iterate_phdr walk;
 *   fork-0, fork-1      fork; the child calls enormoustext_get_stats once
 *                       (its lock must be usable), works a little and
 *                       _exit's with a code the parent knows; the parent
 *                       waits and checks the code (a child that hangs 3 s
 *                       exits 5 from its own alarm: the parent says so).
 *                       glibc 2.36 does not reset its dl_load_write_lock
 *                       in a fork child: when a thread of the parent was
 *                       inside dl_iterate_phdr, dlopen or dlclose at the
 *                       fork, a dl_iterate_phdr in the child waits for
 *                       ever.  So the child's API call passes only if the
 *                       library answers it there without dl_iterate_phdr;
 *                       --no-child-api leaves that call out (to look at the
 *                       parent's lock order alone).
 * A watchdog thread looks every second at per-thread progress counters;
 * a thread without progress for --stall seconds (default 6: the machine
 * is small and noisy) is stuck: the watchdog names every thread that is
 * behind and where it is, kills the children and exits 3 at once — a
 * deadlock fails the test quickly, it never hangs it.  alarm() backs the
 * watchdog up.  Every result is checked; exit 0 pass, 1 wrong result,
 * 2 usage/setup, 3 stuck, 4 the alarm fired.
 *
 * Prints the dlopen/dlclose and fork rates (per second), and a RESULT line
 * that must be the same with and without the library.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>

#include "cc_common.h"

enum { T_DL0, T_DL1, T_API0, T_API1, T_FORK0, T_FORK1, NT };
static const char *const tname[NT] = { "dlopen-0", "dlopen-1", "api-0", "api-1", "fork-0", "fork-1" };

/* Where a thread is, for the watchdog's report. */
enum where { W_START, W_DLOPEN, W_CALLS, W_DLCLOSE, W_STATS, W_COUNT, W_OBJECT, W_ITERATE, W_FORK, W_WAIT,
             W_IDLE, W_DONE };
static const char *const wname[] = { "starting", "in dlopen", "calling the library", "in dlclose",
                                     "in enormoustext_get_stats", "in enormoustext_object_count",
                                     "in enormoustext_get_object", "in dl_iterate_phdr", "in fork",
                                     "in waitpid (child running)", "between calls", "finished" };

static struct cc_api api;
static const char *libs[2];
static int stop_flag;
static int stall_limit = 6;
static int child_api = 1;
static uint64_t progress[NT];
static int where_[NT];
static int done_[NT];
static pid_t child_pid[2];
static double t_start;

/* Results (atomics) and the first failure's text. */
static uint64_t n_wrong, n_ctor_bad, n_child_bad, n_api_bad, n_dl_fail;
static uint64_t n_cycles, n_forks, n_api_rounds, n_calls;
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_msg[512];
static int first_msg_ready;   /* set once first_msg is written (the watchdog reads it) */

static void failure(uint64_t *counter, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failure(uint64_t *counter, const char *fmt, ...)
{
	__atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&msg_lock);
	if (!first_msg[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(first_msg, sizeof first_msg, fmt, ap);
		va_end(ap);
		__atomic_store_n(&first_msg_ready, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&msg_lock);
}

static void at(int t, enum where w)
{
	__atomic_store_n(&where_[t], (int)w, __ATOMIC_RELAXED);
}

static void tick(int t)
{
	__atomic_add_fetch(&progress[t], 1, __ATOMIC_RELAXED);
}

static int stopping(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_RELAXED);
}

static void *dl_thread(void *arg)
{
	int t = (int)(uintptr_t)arg;
	const char *lib = libs[t - T_DL0];
	uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1);
	while (!stopping()) {
		at(t, W_DLOPEN);
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			failure(&n_dl_fail, "%s: dlopen %s: %s", tname[t], lib, dlerror());
			break;
		}
		at(t, W_CALLS);
		int (*ok)(void) = (int (*)(void))dlsym(h, "cc_ctor_ok");
		struct cc_table tb;
		if (!ok || ok() != 1)
			failure(&n_ctor_bad, "%s: %s: the constructor %s", tname[t], lib,
			        !ok ? "is missing" : ok() < 0 ? "did not run" : "got wrong results");
		if (cc_lib_table(h, &tb) != 0) {
			failure(&n_dl_fail, "%s: %s has no bt_lib_table", tname[t], lib);
		} else {
			for (int k = 0; k < 16; k++) {
				unsigned i = (unsigned)(cc_rand(&seed) % tb.n);
				if (!cc_call_lib(&tb, i))
					failure(&n_wrong, "%s: %s: function %u returned a wrong value", tname[t], lib, i);
			}
			__atomic_add_fetch(&n_calls, 16, __ATOMIC_RELAXED);
		}
		at(t, W_DLCLOSE);
		if (dlclose(h) != 0)
			failure(&n_dl_fail, "%s: dlclose %s: %s", tname[t], lib, dlerror());
		__atomic_add_fetch(&n_cycles, 1, __ATOMIC_RELAXED);
		tick(t);
	}
	at(t, W_DONE);
	__atomic_store_n(&done_[t], 1, __ATOMIC_RELEASE);
	return NULL;
}

static int count_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	++*(int *)arg;
	return 0;
}

static void *api_thread(void *arg)
{
	int t = (int)(uintptr_t)arg;
	while (!stopping()) {
		if (api.get_stats) {
			struct enormoustext_stats st;
			memset(&st, 0, sizeof st);
			st.size = sizeof st;
			at(t, W_STATS);
			int r = api.get_stats(&st);
			/* (objects may be 0: before the first dlopen the quick
			 * start-up has looked at none) */
			if (r != 0 || st.ran != 1)
				failure(&n_api_bad, "%s: enormoustext_get_stats: %d, ran %u", tname[t], r, st.ran);
			at(t, W_COUNT);
			int n = api.object_count();
			if (n < 0)
				failure(&n_api_bad, "%s: enormoustext_object_count: %d", tname[t], n);
			for (int i = 0; i < n + 2; i++) {
				struct enormoustext_object o;
				memset(&o, 0, sizeof o);
				o.size = sizeof o;
				at(t, W_OBJECT);
				/* The table changes while we read it (dlopen, dlclose): an
				 * index may have gone; one that answers is whole. */
				r = api.get_object((unsigned)i, &o);
				if (r == -ERANGE)
					continue;
				if (r != 0 || memchr(o.path, '\0', sizeof o.path) == NULL || o.text_end < o.text_start)
					failure(&n_api_bad, "%s: enormoustext_get_object(%d): %d", tname[t], i, r);
			}
			struct enormoustext_object o;
			memset(&o, 0, sizeof o);
			o.size = sizeof o;
			r = api.get_object(1u << 30, &o);
			if (r != -ERANGE)
				failure(&n_api_bad, "%s: enormoustext_get_object(2^30): %d, not -ERANGE", tname[t], r);
		}
		at(t, W_ITERATE);
		int objs = 0;
		dl_iterate_phdr(count_cb, &objs);
		if (objs < 2)
			failure(&n_api_bad, "%s: dl_iterate_phdr saw %d objects", tname[t], objs);
		at(t, W_IDLE);
		__atomic_add_fetch(&n_api_rounds, 1, __ATOMIC_RELAXED);
		tick(t);
		if (!api.get_stats)
			sched_yield();
	}
	at(t, W_DONE);
	__atomic_store_n(&done_[t], 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The child's alarm: it hung (in enormoustext_get_stats: nothing else
 * it does can block). */
static void child_on_alarm(int sig)
{
	(void)sig;
	_exit(5);
}

/* The child's work: something its parent can check. */
static int child_code(uint64_t seq)
{
	uint64_t s = seq * 2654435761u + 1, acc = 0;
	for (int i = 0; i < 1000; i++)
		acc += cc_rand(&s) & 0xff;
	return 10 + (int)(acc % 100);
}

static void *fork_thread(void *arg)
{
	int t = (int)(uintptr_t)arg;
	int slot = t - T_FORK0;
	for (uint64_t seq = (uint64_t)slot << 40; !stopping(); seq++) {
		at(t, W_FORK);
		double forked_at = cc_now();
		uint64_t cycles_then = __atomic_load_n(&n_cycles, __ATOMIC_RELAXED);
		pid_t pid = fork();
		if (pid < 0) {
			failure(&n_child_bad, "%s: fork: %s", tname[t], strerror(errno));
			break;
		}
		if (pid == 0) {
			/* The child is one thread, a copy of this one: a lock held
			 * by a thread of the parent would be held for ever here.
			 * Its own alarm kills it, before the parent's watchdog
			 * fires, if it hangs. */
			struct sigaction sa;
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = child_on_alarm;
			sigaction(SIGALRM, &sa, NULL);
			alarm(3);
			if (api.get_stats && child_api) {
				struct enormoustext_stats st;
				memset(&st, 0, sizeof st);
				st.size = sizeof st;
				if (api.get_stats(&st) != 0 || st.ran != 1)
					_exit(2);
			}
			_exit(child_code(seq));
		}
		__atomic_store_n(&child_pid[slot], pid, __ATOMIC_RELEASE);
		at(t, W_WAIT);
		int st = 0;
		pid_t w;
		while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
			;
		__atomic_store_n(&child_pid[slot], 0, __ATOMIC_RELEASE);
		int want = child_code(seq);
		if (w != pid)
			failure(&n_child_bad, "%s: waitpid: %s", tname[t], strerror(errno));
		else if (!WIFEXITED(st) || WEXITSTATUS(st) != want)
			failure(&n_child_bad, "%s: child %ld (forked %.2f s after the start, %llu dlopen/dlclose "
			        "cycles done then): %s %d, expected exit %d%s",
			        tname[t], (long)pid, forked_at - t_start, (unsigned long long)cycles_then,
			        WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			        want,
			        WIFEXITED(st) && WEXITSTATUS(st) == 5 ?
			                " (it hung for 3 s in enormoustext_get_stats: a lock held by a thread of the parent at the fork)" :
			        WIFEXITED(st) && WEXITSTATUS(st) == 2 ? " (its enormoustext_get_stats failed)" : "");
		__atomic_add_fetch(&n_forks, 1, __ATOMIC_RELAXED);
		tick(t);
	}
	at(t, W_DONE);
	__atomic_store_n(&done_[t], 1, __ATOMIC_RELEASE);
	return NULL;
}

static void kill_children(void)
{
	for (int i = 0; i < 2; i++) {
		pid_t p = __atomic_load_n(&child_pid[i], __ATOMIC_ACQUIRE);
		if (p > 0)
			kill(p, SIGKILL);
	}
}

/* Only write(2), kill(2), _exit(2): whatever the stuck threads hold. */
static void report_stuck(const int *stalled, const char *why, int code)
{
	char b[24];
	cc_write_str("fork_dlopen_api: FAIL: ");
	cc_write_str(why);
	cc_write_str(" after ");
	cc_write_str(cc_u64_text((uint64_t)(cc_now() - t_start), b));
	cc_write_str(" s; threads without progress:\n");
	for (int t = 0; t < NT; t++) {
		if (!stalled || stalled[t] > 0) {
			int w = __atomic_load_n(&where_[t], __ATOMIC_RELAXED);
			cc_write_str("fork_dlopen_api:   ");
			cc_write_str(tname[t]);
			cc_write_str(": ");
			cc_write_str(wname[w]);
			if (stalled) {
				cc_write_str(", none for ");
				cc_write_str(cc_u64_text((uint64_t)stalled[t], b));
				cc_write_str(" s");
			}
			cc_write_str(", ");
			cc_write_str(cc_u64_text(__atomic_load_n(&progress[t], __ATOMIC_RELAXED), b));
			cc_write_str(" rounds done\n");
		}
	}
	cc_write_str("fork_dlopen_api: dlopen/dlclose cycles ");
	cc_write_str(cc_u64_text(__atomic_load_n(&n_cycles, __ATOMIC_RELAXED), b));
	cc_write_str(", forks ");
	cc_write_str(cc_u64_text(__atomic_load_n(&n_forks, __ATOMIC_RELAXED), b));
	cc_write_str(" before the stall\n");
	if (__atomic_load_n(&first_msg_ready, __ATOMIC_ACQUIRE)) {
		cc_write_str("fork_dlopen_api: first failure before that: ");
		cc_write_str(first_msg);
		cc_write_str("\n");
	}
	kill_children();
	_exit(code);
}

static void *watchdog(void *arg)
{
	(void)arg;
	uint64_t last[NT];
	int stalled[NT] = { 0 };
	for (int t = 0; t < NT; t++)
		last[t] = __atomic_load_n(&progress[t], __ATOMIC_RELAXED);
	for (;;) {
		cc_sleep_us(1000000);
		int worst = 0, all_done = 1;
		for (int t = 0; t < NT; t++) {
			uint64_t p = __atomic_load_n(&progress[t], __ATOMIC_RELAXED);
			int d = __atomic_load_n(&done_[t], __ATOMIC_ACQUIRE);
			all_done &= d;
			if (p != last[t] || d)
				stalled[t] = 0;
			else
				stalled[t]++;
			last[t] = p;
			if (stalled[t] > worst)
				worst = stalled[t];
		}
		if (all_done)
			return NULL;
		if (worst >= stall_limit)
			report_stuck(stalled, "stuck (a deadlock?)", 3);
	}
}

static void on_alarm(int sig)
{
	(void)sig;
	report_stuck(NULL, "the alarm fired (the watchdog did not)", 4);
}

int main(int argc, char **argv)
{
	double seconds = 10;
	int a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--seconds") && a + 1 < argc)
			seconds = atof(argv[++a]);
		else if (!strcmp(argv[a], "--stall") && a + 1 < argc)
			stall_limit = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--no-child-api"))
			child_api = 0;
		else
			break;
	}
	if (argc - a != 2 || seconds <= 0 || stall_limit < 1) {
		fprintf(stderr, "usage: cc_fork_dlopen_api [--seconds S] [--stall S] [--no-child-api] LIB_A LIB_B\n");
		return 2;
	}
	libs[0] = argv[a];
	libs[1] = argv[a + 1];
	setvbuf(stdout, NULL, _IONBF, 0);
	cc_api_find(&api);
	printf("fork_dlopen_api: %s; %.0f s, a thread is stuck after %d s without progress\n",
	       api.get_stats ? "the library is in the process (API calls made)" :
	                       "the library is not in the process (API calls skipped)",
	       seconds, stall_limit);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)seconds + 2u * (unsigned)stall_limit + 10u);

	t_start = cc_now();
	pthread_t th[NT], wd;
	void *(*fn[NT])(void *) = { dl_thread, dl_thread, api_thread, api_thread, fork_thread, fork_thread };
	/* The watchdog first: a thread that forks while this one creates the
	 * others may already block pthread_create. */
	if (pthread_create(&wd, NULL, watchdog, NULL) != 0) {
		printf("fork_dlopen_api: FAIL: pthread_create\n");
		return 2;
	}
	for (int t = 0; t < NT; t++)
		if (pthread_create(&th[t], NULL, fn[t], (void *)(uintptr_t)t) != 0) {
			printf("fork_dlopen_api: FAIL: pthread_create\n");
			return 2;
		}
	while (cc_now() - t_start < seconds)
		cc_sleep_us(100000);
	double t_end = cc_now();
	uint64_t cycles = __atomic_load_n(&n_cycles, __ATOMIC_RELAXED);
	uint64_t forks = __atomic_load_n(&n_forks, __ATOMIC_RELAXED);
	uint64_t rounds = __atomic_load_n(&n_api_rounds, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	pthread_join(wd, NULL);
	alarm(0);

	double el = t_end - t_start;
	printf("fork_dlopen_api: %.1f s: %llu dlopen/dlclose cycles (%.1f/s), %llu forks (%.1f/s), "
	       "%llu API rounds (%.1f/s), %llu calls into the libraries\n",
	       el, (unsigned long long)cycles, (double)cycles / el, (unsigned long long)forks,
	       (double)forks / el, (unsigned long long)rounds, (double)rounds / el,
	       (unsigned long long)n_calls);
	printf("fork_dlopen_api: per thread:");
	for (int t = 0; t < NT; t++)
		printf(" %s %llu", tname[t], (unsigned long long)progress[t]);
	printf("\n");
	uint64_t bad = n_wrong + n_ctor_bad + n_child_bad + n_api_bad + n_dl_fail;
	int idle = 0;
	for (int t = 0; t < NT; t++)
		idle |= progress[t] == 0;
	printf("fork_dlopen_api: RESULT wrong=%llu ctor_bad=%llu child_bad=%llu api_bad=%llu dl_fail=%llu "
	       "every_thread_ran=%s\n",
	       (unsigned long long)n_wrong, (unsigned long long)n_ctor_bad, (unsigned long long)n_child_bad,
	       (unsigned long long)n_api_bad, (unsigned long long)n_dl_fail, idle ? "no" : "yes");
	if (bad || idle) {
		printf("fork_dlopen_api: FAIL: %s\n", first_msg[0] ? first_msg : "a thread never made progress");
		return 1;
	}
	printf("fork_dlopen_api: PASS\n");
	return 0;
}
