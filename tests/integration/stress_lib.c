/*
 * stress_lib.c — a library that is busy while its text moves.
 *
 * Its constructor installs a SIGUSR1 handler and starts two threads that
 * call the library's functions (bt_lib_funcs.c, linked after this file) in
 * a tight loop and check every result.  The handler is aligned to 2 MiB so
 * that it starts a whole window (the 8 MiB of functions follow it): it runs
 * in moved text, and checks results too.  stress_stop() stops the threads
 * and hands back the counts.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "bigtext.h"

static uint64_t calls, wrong, sig_calls, sig_wrong;
static int stop_flag;
static pthread_t workers[2];
static int nworkers;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

__attribute__((visibility("default"), aligned(2097152), noinline))
void stress_signal_handler(int sig)
{
	(void)sig;
	static uint64_t k = 88172645463325252ull;
	unsigned n;
	const bt_fn *t = bt_lib_table(&n);
	unsigned i = (unsigned)(__atomic_add_fetch(&k, 0x9E3779B97F4A7C15ull, __ATOMIC_RELAXED) % n);
	uint64_t x = bt_arg(BT_OBJ_LIB, i);
	if (t[i](x) != bt_expect(BT_OBJ_LIB, i, x))
		__atomic_add_fetch(&sig_wrong, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&sig_calls, 1, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	uint64_t s = 0x2545F4914F6CDD1Dull + (uintptr_t)arg;
	unsigned n;
	const bt_fn *t = bt_lib_table(&n);
	uint64_t c = 0, w = 0;
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		unsigned i = (unsigned)(next_rand(&s) % n);
		uint64_t x = bt_arg(BT_OBJ_LIB, i);
		if (t[i](x) != bt_expect(BT_OBJ_LIB, i, x))
			w++;
		if (++c % 1024 == 0) {
			__atomic_add_fetch(&calls, c, __ATOMIC_RELAXED);
			__atomic_add_fetch(&wrong, w, __ATOMIC_RELAXED);
			c = w = 0;
		}
	}
	__atomic_add_fetch(&calls, c, __ATOMIC_RELAXED);
	__atomic_add_fetch(&wrong, w, __ATOMIC_RELAXED);
	return NULL;
}

__attribute__((constructor)) static void stress_start(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = stress_signal_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&workers[i], NULL, worker, (void *)(uintptr_t)(i + 1)) == 0)
			nworkers++;
}

/* Stop the threads; out = { calls, wrong, signal calls, signal wrong, threads }. */
__attribute__((visibility("default"))) void stress_stop(uint64_t out[5])
{
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i], NULL);
	out[0] = __atomic_load_n(&calls, __ATOMIC_RELAXED);
	out[1] = __atomic_load_n(&wrong, __ATOMIC_RELAXED);
	out[2] = __atomic_load_n(&sig_calls, __ATOMIC_RELAXED);
	out[3] = __atomic_load_n(&sig_wrong, __ATOMIC_RELAXED);
	out[4] = (uint64_t)nworkers;
}
