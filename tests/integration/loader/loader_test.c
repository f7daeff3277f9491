/*
 * loader_test.c — the library's dlopen/dlclose wrappers must not change
 * what the loader does nor hang nor crash, in the patterns real programs use.
 *
 *   loader_test runpath     dlopen("libplug.so") found through the program's
 *                           RUNPATH ($ORIGIN/plugins), and "$ORIGIN/plugins/..."
 *   loader_test dtor        a library whose destructor dlcloses what its
 *                           constructor dlopened: dlclose returns
 *   loader_test failing S   for S seconds, one thread dlopens a 6 MiB library
 *                           that fails to load (undefined symbol) while the
 *                           main thread dlopens and dlcloses another
 *   loader_test inversion   a dlclose while another thread is inside a dlopen
 *                           whose constructor dlopens and dlcloses
 *   loader_test lazy        enormoustext_refresh while another thread's
 *                           dlopen runs a constructor that dlopens
 *   loader_test fresh N     N times dlopen + check the object is in the
 *                           library's table at once, with a thread reading
 *                           the table all the while; then dlclose
 * IT_LIBDIR: where the libraries are.  A watchdog turns a hang into a
 * failure.  Exit 0 pass, 1 fail.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "enormoustext.h"

static char dir[4096];

static const char *lib(const char *name)
{
	static char p[4][4200];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

static void watchdog(int sig)
{
	(void)sig;
	static const char m[] = "loader_test: FAIL: hung (watchdog)\n";
	(void)!write(1, m, sizeof m - 1);
	_exit(1);
}

static volatile int stop;

static char bad_path[4200];

static void *failing_loader(void *a)
{
	(void)a;
	long n = 0;
	while (!stop) {
		void *h = dlopen(bad_path, RTLD_NOW);
		if (h) {
			printf("loader_test: FAIL: libbad.so loaded\n");
			exit(1);
		}
		n++;
	}
	printf("loader_test: %ld failed dlopens of libbad.so\n", n);
	return NULL;
}

/* a: the library's full path (made before the thread starts). */
static void *slow_open(void *a)
{
	void *h = dlopen((const char *)a, RTLD_NOW);
	printf("loader_test: dlopen %s (slow constructor) -> %s\n", (const char *)a, h ? "ok" : dlerror());
	return h;
}

static void *table_reader(void *a)
{
	(void)a;
	int (*get)(struct enormoustext_stats *) =
		(int (*)(struct enormoustext_stats *))dlsym(RTLD_DEFAULT, "enormoustext_get_stats");
	while (!stop && get) {
		struct enormoustext_stats st = { .size = sizeof st };
		get(&st);
	}
	return NULL;
}

static int in_table(const char *needle)
{
	int (*count)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_object_count");
	int (*get)(unsigned, struct enormoustext_object *) =
		(int (*)(unsigned, struct enormoustext_object *))dlsym(RTLD_DEFAULT, "enormoustext_get_object");
	if (!count || !get)
		return -1;
	int n = count();
	for (int i = 0; i < n; i++) {
		struct enormoustext_object o = { .size = sizeof o };
		if (get((unsigned)i, &o) == 0 && strstr(o.path, needle))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	const char *d = getenv("IT_LIBDIR");
	snprintf(dir, sizeof dir, "%s", d ? d : ".");
	signal(SIGALRM, watchdog);
	alarm(40);
	int fails = 0;
	const char *mode = argv[1];
	if (!strcmp(mode, "runpath")) {
		void *h = dlopen("libplug.so", RTLD_NOW);
		printf("loader_test: dlopen(\"libplug.so\") -> %s\n", h ? "found" : dlerror());
		void *h2 = dlopen("$ORIGIN/plugins/libplug.so", RTLD_NOW);
		printf("loader_test: dlopen(\"$ORIGIN/plugins/libplug.so\") -> %s\n", h2 ? "found" : dlerror());
		int (*plug)(void) = h ? (int (*)(void))dlsym(h, "plug") : NULL;
		Dl_info di;
		if (plug && dladdr((void *)plug, &di))
			printf("loader_test: libplug.so loaded from %s, plug() = %d\n", di.dli_fname, plug());
		fails += !h || !h2 || !plug;
	} else if (!strcmp(mode, "origin")) {
		/* From a program without $ORIGIN in its own RUNPATH. */
		void *h = dlopen("$ORIGIN/plugins/libplug.so", RTLD_NOW);
		printf("loader_test: dlopen(\"$ORIGIN/plugins/libplug.so\") -> %s\n", h ? "found" : dlerror());
		fails += !h;
	} else if (!strcmp(mode, "dtor")) {
		void *h = dlopen(lib("libouter.so"), RTLD_NOW);
		printf("loader_test: dlopen libouter.so -> %s\n", h ? "ok" : dlerror());
		int r = h ? dlclose(h) : -1;
		printf("loader_test: dlclose libouter.so -> %d\n", r);
		fails += !h || r != 0;
	} else if (!strcmp(mode, "failing")) {
		int secs = argc > 2 ? atoi(argv[2]) : 5;
		snprintf(bad_path, sizeof bad_path, "%s/libbad.so", dir);
		char inner_path[4200];
		snprintf(inner_path, sizeof inner_path, "%s/libinner.so", dir);
		pthread_t t;
		pthread_create(&t, NULL, failing_loader, NULL);
		time_t end = time(NULL) + secs;
		long n = 0;
		while (time(NULL) < end) {
			void *h = dlopen(inner_path, RTLD_NOW);
			if (!h) {
				printf("loader_test: FAIL: dlopen libinner.so: %s\n", dlerror());
				fails++;
				break;
			}
			dlclose(h);
			n++;
		}
		stop = 1;
		pthread_join(t, NULL);
		printf("loader_test: %ld dlopen/dlclose pairs of libinner.so\n", n);
	} else if (!strcmp(mode, "inversion")) {
		dlclose(dlopen(lib("libinner.so"), RTLD_NOW));
		void *other = dlopen(lib("libplain.so"), RTLD_NOW);
		pthread_t t;
		static char slow[4200];
		snprintf(slow, sizeof slow, "%s/libslow.so", dir);
		pthread_create(&t, NULL, slow_open, slow);
		usleep(100000);
		int r = dlclose(other);
		printf("loader_test: dlclose while the other thread is in a constructor -> %d\n", r);
		void *h;
		pthread_join(t, &h);
		fails += r != 0 || !h;
	} else if (!strcmp(mode, "lazy")) {
		int (*refresh)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_refresh");
		pthread_t t;
		static char slow2[4200];
		snprintf(slow2, sizeof slow2, "%s/libslow2.so", dir);
		pthread_create(&t, NULL, slow_open, slow2);
		usleep(100000);
		int r = refresh ? refresh() : -1;
		printf("loader_test: enormoustext_refresh during a constructor's dlopen -> %d\n", r);
		void *h;
		pthread_join(t, &h);
		fails += !refresh || !h;
	} else if (!strcmp(mode, "fresh")) {
		int n = argc > 2 ? atoi(argv[2]) : 500, miss = 0;
		pthread_t t;
		pthread_create(&t, NULL, table_reader, NULL);
		for (int i = 0; i < n; i++) {
			void *h = dlopen(lib("libinner.so"), RTLD_NOW);
			int in = in_table("libinner.so");
			if (in < 0) {
				printf("loader_test: FAIL: the library's API is not there (preloaded?)\n");
				fails++;
				break;
			}
			miss += !in;
			dlclose(h);
		}
		stop = 1;
		pthread_join(t, NULL);
		printf("loader_test: %d of %d dlopens not in the table when dlopen returned\n", miss, n);
		fails += miss != 0;
	} else {
		return 2;
	}
	printf("loader_test: %s\n", fails ? "FAIL" : "PASS");
	return fails ? 1 : 0;
}
