/*
 * sample.c — the program the layout tests link with enormous.ld: a hot
 * function, a cold one, main (in .text.startup at -O2) and a call through
 * the PLT.  Built as an executable, or as a shared library (-DSAMPLE_DSO).
 * With SAMPLE_SMAPS=PATH in the environment the program copies
 * /proc/self/smaps to PATH and prints the address of sample_hot, for the
 * run-time tests (runtime.*), which read the huge share from that copy.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((hot, noinline)) int sample_hot(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int sample_cold(int x)
{
	return x * 5 - 2;
}

/* in .text.unlikely */
__attribute__((cold, noinline)) int sample_unlikely(int x)
{
	return x - 7;
}

/* SAMPLE_SMAPS: "hot ADDRESS" on stdout, /proc/self/smaps copied to the
 * path; 0, or -1 when the copy failed */
int sample_smaps(void *hot)
{
	const char *path = getenv("SAMPLE_SMAPS");
	if (!path)
		return 0;
	FILE *in = fopen("/proc/self/smaps", "r"), *out = fopen(path, "w");
	int rc = in && out ? 0 : -1;
	char buf[4096];
	size_t n;
	while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			rc = -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	printf("hot %p\n", hot);
	return rc;
}

#ifdef SAMPLE_DSO
int sample_entry(int x)
{
	printf("sample %d\n", x);
	return sample_hot(x) + sample_cold(x);
}

/* what a program using the library calls for SAMPLE_SMAPS */
int sample_report(void)
{
	return sample_smaps((void *)sample_hot);
}
#else
int main(int argc, char **argv)
{
	(void)argv;
	printf("sample %d\n", sample_hot(argc) + sample_cold(argc) + (argc > 99 ? sample_unlikely(argc) : 0));
	return sample_smaps((void *)sample_hot) == 0 ? 0 : 1;
}
#endif
