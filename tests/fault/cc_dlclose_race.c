/*
 * cc_dlclose_race.c — dlclose racing a pass.
 *
 *   cc_dlclose_race [--seconds S] LIB...        (2 to 8 big libraries)
 *
 * For S seconds (default 8): two loader threads dlopen and dlclose the
 * libraries (copies of libbigtext.so under different names, some of them
 * laid out so that the library pads their last window), each keeping a
 * library open for a moment; two caller threads call the functions of the
 * libraries that are open and check every result (a reader lock per
 * library keeps a library open while it is called: the race under test is
 * the library's pass against the loader, not the program's own); one
 * thread calls the API (enormoustext_refresh, _get_stats, _object_count,
 * _get_object) when the library is in the process.  So the passes that
 * one thread's dlopen starts run while another thread unmaps a library.
 *
 * At the end every library is closed, and /proc/self/maps must hold no
 * anonymous executable mapping: none where a closed library was (a copy
 * or padding left behind), none anywhere (this program has no other).
 * Exit 0 pass, 1 fail, 2 usage/setup, 3 a thread stuck for 20 s.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "cc_common.h"

#define MAXL 8
#define MAXSPANS 4096

struct lib {
	const char *path, *name;
	pthread_rwlock_t rw;
	struct cc_table tb;   /* valid while published (under rw) */
	int published;
};

static struct lib libs[MAXL];
static int nlibs;
static struct cc_api api;
static uint64_t H;
static int stop_flag;

static uint64_t n_cycles, n_calls, n_wrong, n_api, n_api_bad, n_padded_seen, n_fail;
/* enormoustext_refresh's -EAGAIN (documented: another thread is doing the
 * checks a quick start-up left for later; on a loaded machine that takes a
 * while, and this loop asks thousands of times meanwhile), and its
 * successes: one at least is wanted, or the -EAGAIN never ended */
static uint64_t n_refresh_again, n_refresh_ok;
static uint64_t progress[5];
static const char *const tname[5] = { "loader-0", "loader-1", "caller-0", "caller-1", "api" };

/* Where the libraries were: the whole windows around each text segment. */
static pthread_mutex_t span_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t span_lo[MAXSPANS], span_hi[MAXSPANS];
static int nspans;

static char first_msg[400];
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;
static void failure(uint64_t *counter, const char *what, const char *detail)
{
	__atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&msg_lock);
	if (!first_msg[0])
		snprintf(first_msg, sizeof first_msg, "%s: %s", what, detail ? detail : "");
	pthread_mutex_unlock(&msg_lock);
}

static void note_span(const char *name)
{
	uintptr_t lo, hi;
	if (!et_find_text(name, ET_SEG_MEMSZ, &lo, &hi))
		return;
	lo &= ~(uintptr_t)(H - 1);
	hi = (hi + H - 1) & ~(uintptr_t)(H - 1);
	pthread_mutex_lock(&span_lock);
	int known = 0;
	for (int i = 0; i < nspans && !known; i++)
		known = span_lo[i] == lo && span_hi[i] == hi;
	if (!known && nspans < MAXSPANS) {
		span_lo[nspans] = lo;
		span_hi[nspans] = hi;
		nspans++;
	}
	pthread_mutex_unlock(&span_lock);
}

static void *loader(void *arg)
{
	int t = (int)(uintptr_t)arg;
	uint64_t s = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 7);
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		for (int i = t; i < nlibs; i += 2) {
			struct lib *L = &libs[i];
			void *h = dlopen(L->path, RTLD_NOW | RTLD_LOCAL);
			if (!h) {
				failure(&n_fail, "dlopen", dlerror());
				continue;
			}
			struct cc_table tb;
			if (cc_lib_table(h, &tb) != 0) {
				failure(&n_fail, L->path, "no bt_lib_table");
				dlclose(h);
				continue;
			}
			note_span(L->name);
			pthread_rwlock_wrlock(&L->rw);
			L->tb = tb;
			L->published = 1;
			pthread_rwlock_unlock(&L->rw);
			cc_sleep_us((long)(cc_rand(&s) % 2000));
			pthread_rwlock_wrlock(&L->rw);
			L->published = 0;
			pthread_rwlock_unlock(&L->rw);
			if (dlclose(h) != 0)
				failure(&n_fail, "dlclose", dlerror());
			__atomic_add_fetch(&n_cycles, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&progress[t], 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void *caller(void *arg)
{
	int t = (int)(uintptr_t)arg;
	uint64_t s = 0x2545F4914F6CDD1Dull * (uint64_t)(t + 1);
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		struct lib *L = &libs[cc_rand(&s) % (uint64_t)nlibs];
		int called = 0;
		if (pthread_rwlock_tryrdlock(&L->rw) == 0) {
			if (L->published) {
				for (int k = 0; k < 64; k++)
					if (!cc_call_lib(&L->tb, (unsigned)(cc_rand(&s) % L->tb.n)))
						failure(&n_wrong, L->name, "a function returned a wrong value");
				called = 64;
			}
			pthread_rwlock_unlock(&L->rw);
		}
		if (called)
			__atomic_add_fetch(&n_calls, (uint64_t)called, __ATOMIC_RELAXED);
		else
			sched_yield();
		__atomic_add_fetch(&progress[t], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *api_thread(void *arg)
{
	int t = (int)(uintptr_t)arg;
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		if (!api.get_stats) {
			cc_sleep_us(1000);
			__atomic_add_fetch(&progress[t], 1, __ATOMIC_RELAXED);
			continue;
		}
		char b[64];
		int r = api.refresh();
		if (r == -EAGAIN) {
			__atomic_add_fetch(&n_refresh_again, 1, __ATOMIC_RELAXED);
		} else if (r < 0) {
			snprintf(b, sizeof b, "returned %d", r);
			failure(&n_api_bad, "enormoustext_refresh", b);
		} else {
			__atomic_add_fetch(&n_refresh_ok, 1, __ATOMIC_RELAXED);
		}
		struct enormoustext_stats st;
		memset(&st, 0, sizeof st);
		st.size = sizeof st;
		r = api.get_stats(&st);
		if (r != 0 || st.huge_bytes > st.text_bytes + st.padded_bytes) {
			snprintf(b, sizeof b, "returned %d, huge %llu of %llu bytes", r,
			         (unsigned long long)st.huge_bytes, (unsigned long long)st.text_bytes);
			failure(&n_api_bad, "enormoustext_get_stats", b);
		}
		int n = api.object_count();
		for (int i = 0; i < n; i++) {
			struct enormoustext_object o;
			memset(&o, 0, sizeof o);
			o.size = sizeof o;
			r = api.get_object((unsigned)i, &o);
			if (r == -ERANGE)
				break;   /* the table shrank meanwhile (dlclose) */
			if (r != 0 || o.huge_bytes > o.eligible_bytes || o.text_end < o.text_start) {
				snprintf(b, sizeof b, "object %d: returned %d", i, r);
				failure(&n_api_bad, "enormoustext_get_object", b);
				continue;
			}
			for (int k = 0; k < nlibs && o.padded_bytes > 0; k++)
				if (strstr(o.path, libs[k].name)) {
					__atomic_add_fetch(&n_padded_seen, 1, __ATOMIC_RELAXED);
					break;
				}
		}
		__atomic_add_fetch(&n_api, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&progress[t], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *watchdog(void *arg)
{
	(void)arg;
	uint64_t last[5] = { 0 };
	int still[5] = { 0 };
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		cc_sleep_us(1000000);
		for (int t = 0; t < 5; t++) {
			uint64_t p = __atomic_load_n(&progress[t], __ATOMIC_RELAXED);
			still[t] = p == last[t] ? still[t] + 1 : 0;
			last[t] = p;
			if (still[t] >= 20 && !__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
				cc_write_str("dlclose_race: FAIL: thread ");
				cc_write_str(tname[t]);
				cc_write_str(" made no progress for 20 s (a deadlock?)\n");
				_exit(3);
			}
		}
	}
	return NULL;
}

/* Anonymous executable mappings at the end. */
struct leftovers {
	int anywhere, in_span;
};

static void leftover_cb(const struct cc_map *m, void *arg)
{
	struct leftovers *l = arg;
	if (m->perms[2] != 'x' || m->inode != 0 || m->path[0])
		return;
	int in = 0;
	for (int i = 0; i < nspans && !in; i++)
		in = m->lo < span_hi[i] && m->hi > span_lo[i];
	l->anywhere++;
	l->in_span += in;
	printf("dlclose_race: anonymous executable mapping %lx-%lx %s%s\n", (unsigned long)m->lo,
	       (unsigned long)m->hi, m->perms, in ? " where a closed library was" : "");
}

static int count_leftovers(struct leftovers *l)
{
	memset(l, 0, sizeof *l);
	return cc_maps_each(leftover_cb, l);
}

int main(int argc, char **argv)
{
	double seconds = 8;
	int a = 1;
	if (a + 1 < argc && !strcmp(argv[a], "--seconds")) {
		seconds = atof(argv[a + 1]);
		a += 2;
	}
	nlibs = argc - a;
	if (nlibs < 2 || nlibs > MAXL || seconds <= 0) {
		fprintf(stderr, "usage: cc_dlclose_race [--seconds S] LIB... (2 to %d)\n", MAXL);
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	H = cc_pmd_size();
	cc_api_find(&api);
	for (int i = 0; i < nlibs; i++) {
		libs[i].path = argv[a + i];
		libs[i].name = strrchr(argv[a + i], '/') ? strrchr(argv[a + i], '/') + 1 : argv[a + i];
		pthread_rwlock_init(&libs[i].rw, NULL);
	}
	printf("dlclose_race: %d libraries, %.0f s; %s\n", nlibs, seconds,
	       api.get_stats ? "the library is in the process (API calls made)" :
	                       "the library is not in the process (API calls skipped)");
	pthread_t th[5], wd;
	pthread_create(&wd, NULL, watchdog, NULL);
	for (int t = 0; t < 5; t++) {
		void *(*fn)(void *) = t < 2 ? loader : t < 4 ? caller : api_thread;
		if (pthread_create(&th[t], NULL, fn, (void *)(uintptr_t)t) != 0) {
			printf("dlclose_race: FAIL: pthread_create\n");
			return 2;
		}
	}
	double t0 = cc_now();
	while (cc_now() - t0 < seconds)
		cc_sleep_us(100000);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	for (int t = 0; t < 5; t++)
		pthread_join(th[t], NULL);
	pthread_join(wd, NULL);
	double el = cc_now() - t0;

	/* Padding, once more with nothing racing: each library opened alone,
	 * a pass asked for, the API read, the library closed again (its
	 * padding must go with it: the leftover check below).  Under the race
	 * the API may see a padded library rarely or never (on 2 loaded CPUs
	 * the passes fall behind 400 dlopen/dlclose a second). */
	unsigned long long padded_alone = 0;
	for (int i = 0; i < nlibs && api.refresh; i++) {
		void *h = dlopen(libs[i].path, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			continue;
		(void)api.refresh();
		int n = api.object_count();
		for (int k = 0; k < n; k++) {
			struct enormoustext_object o;
			memset(&o, 0, sizeof o);
			o.size = sizeof o;
			if (api.get_object((unsigned)k, &o) == 0 && o.padded_bytes > 0 && strstr(o.path, libs[i].name))
				padded_alone++;
		}
		dlclose(h);
	}
	if (api.refresh)
		(void)api.refresh();   /* the closed ones leave the table, their padding with them */

	int fails = 0;
	struct leftovers l;
	if (count_leftovers(&l) < 0) {
		printf("dlclose_race: FAIL: cannot read /proc/self/maps\n");
		return 2;
	}
	if (l.anywhere && api.refresh) {
		/* Was it only a pass not run yet?  Ask for one and look again. */
		int r = api.refresh();
		struct leftovers l2;
		count_leftovers(&l2);
		printf("dlclose_race: after enormoustext_refresh (%d): %d anonymous executable mapping(s) left\n", r,
		       l2.anywhere);
	}
	printf("dlclose_race: %.1f s: %llu dlopen/dlclose cycles (%.1f/s), %llu calls, %llu API rounds; "
	       "%d library places seen; one of them padded, as the API said, %llu times (%llu opened alone)\n",
	       el, (unsigned long long)n_cycles, (double)n_cycles / el, (unsigned long long)n_calls,
	       (unsigned long long)n_api, nspans, (unsigned long long)n_padded_seen, padded_alone);
	printf("dlclose_race: RESULT wrong=%llu dl_fail=%llu api_bad=%llu leftovers=%d called=%s\n",
	       (unsigned long long)n_wrong, (unsigned long long)n_fail, (unsigned long long)n_api_bad,
	       l.anywhere, n_calls ? "yes" : "no");
	if (n_wrong || n_fail || n_api_bad) {
		printf("dlclose_race: FAIL: %s\n", first_msg);
		fails++;
	}
	if (api.refresh)
		printf("dlclose_race: enormoustext_refresh: %llu answers, %llu -EAGAIN while the start-up's checks ran\n",
		       (unsigned long long)n_refresh_ok, (unsigned long long)n_refresh_again);
	if (n_api && !n_refresh_ok) {
		printf("dlclose_race: FAIL: enormoustext_refresh never answered (%llu times -EAGAIN)\n",
		       (unsigned long long)n_refresh_again);
		fails++;
	}
	if (l.anywhere) {
		printf("dlclose_race: FAIL: %d anonymous executable mapping(s) left after every library was closed, "
		       "%d where a library was\n", l.anywhere, l.in_span);
		fails++;
	}
	if (!n_calls || !n_cycles) {
		printf("dlclose_race: FAIL: no call was made into an open library\n");
		fails++;
	}
	printf("dlclose_race: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
