/*
 * sample.c — the program the layout tests link with enormous.ld: a hot
 * function, a cold one, main (in .text.startup at -O2) and a call through
 * the PLT.  Built as an executable, or as a shared library (-DSAMPLE_DSO).
 */
#include <stdio.h>

__attribute__((hot, noinline)) int sample_hot(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int sample_cold(int x)
{
	return x * 5 - 2;
}

#ifdef SAMPLE_DSO
int sample_entry(int x)
{
	printf("sample %d\n", x);
	return sample_hot(x) + sample_cold(x);
}
#else
int main(int argc, char **argv)
{
	(void)argv;
	printf("sample %d\n", sample_hot(argc) + sample_cold(argc));
	return 0;
}
#endif
