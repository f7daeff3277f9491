/* dl_reopen LIB [N] — keep LIB loaded, then N times dlopen + dlclose it (the
 * loader only counts references): prints the rate. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
	int n = argc > 2 ? atoi(argv[2]) : 20000;
	void *keep = dlopen(argv[1], RTLD_NOW);
	if (!keep) { printf("%s\n", dlerror()); return 1; }
	struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) { void *h = dlopen(argv[1], RTLD_NOW); dlclose(h); }
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
	printf("%.0f dlopen/dlclose per s\n", n / s);
	return 0;
}
