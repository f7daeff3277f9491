/*
 * cc_ctor_lib.c — a big library with a constructor, for the concurrency
 * tests (linked with the generated bt_lib_funcs.c: 8 MiB of text).
 *
 * Its constructor runs while the loader holds its lock: it calls a few of
 * the library's functions and checks them (cc_ctor_ok() says whether they
 * were right), and hands the library's table to the program through
 * cc_publish_table(), if the program defines it (cc_signal_swap does: its
 * signal handler then calls this library's functions while the dlopen
 * pass moves them).  It must not do anything that takes a lock the
 * library under test might hold.
 */
#include <dlfcn.h>
#include <stdint.h>

#include "bigtext.h"

static int ctor_ok = -1;

__attribute__((constructor)) static void cc_ctor(void)
{
	unsigned n = 0;
	const bt_fn *t = bt_lib_table(&n);
	int ok = n > 0;
	for (unsigned i = 0; i < n && ok; i += n / 7 + 1) {
		uint64_t x = bt_arg(BT_OBJ_LIB, i);
		ok = t[i](x) == bt_expect(BT_OBJ_LIB, i, x);
	}
	ctor_ok = ok;
	void (*publish)(const bt_fn *, unsigned) =
		(void (*)(const bt_fn *, unsigned))dlsym(RTLD_DEFAULT, "cc_publish_table");
	if (publish)
		publish(t, n);
}

/* 1: the constructor ran and its calls were right; 0: wrong; -1: it did not run. */
__attribute__((visibility("default"))) int cc_ctor_ok(void)
{
	return ctor_ok;
}
