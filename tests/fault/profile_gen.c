/*
 * profile_gen — writes a large version-1 profile (the ENORMOUSTEXT_PROFILE
 * format, see README.md) for the scale tests: many objects of a fleet that
 * a process does not load, around the real objects a test cares about.
 *
 *   profile_gen [-n OBJECTS] [-c COUNTS] [-g GRANULE] [-i BODY] [-a AFTER] [-d] [-o OUT]
 *
 *   -n OBJECTS  generated objects (default 200000): distinct build-ids
 *               (20-byte ones, every fourth an 8-byte one like lld's
 *               --build-id=fast), made-up paths
 *   -c COUNTS   count lines per generated object (default 2; 0: objects
 *               loaded and never run)
 *   -g GRANULE  the granule line (default 4096)
 *   -i BODY     a profile whose object and count lines are copied in (its
 *               header and granule lines are dropped): the real objects
 *   -a AFTER    where: after this many generated objects (default half)
 *   -d          the last generated object repeats the first one's build-id
 *               (the file must then be refused)
 *   -o OUT      the file to write (default stdout)
 *
 * The build-ids come from a fixed sequence (splitmix64): the same arguments
 * write the same file.  Prints nothing else; exit 0, or 2 on bad usage or
 * an I/O error.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The build-id of generated object i, in lower-case hex. */
static void gen_build_id(uint64_t i, char out[41])
{
	uint64_t s = i * 0x2545f4914f6cdd1dull + 1;
	uint64_t a = splitmix64(&s), b = splitmix64(&s), c = splitmix64(&s);
	if (i % 4 == 3)
		snprintf(out, 41, "%016" PRIx64, a);
	else
		snprintf(out, 41, "%016" PRIx64 "%016" PRIx64 "%08" PRIx32, a, b, (uint32_t)c);
}

static int usage(void)
{
	fprintf(stderr, "usage: profile_gen [-n OBJECTS] [-c COUNTS] [-g GRANULE] [-i BODY] [-a AFTER] [-d] [-o OUT]\n");
	return 2;
}

/* Copies BODY's lines after its granule line. */
static int copy_body(FILE *out, const char *path)
{
	FILE *in = fopen(path, "r");
	if (!in) {
		perror(path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int past_granule = 0;
	while (getline(&line, &cap, in) > 0) {
		if (past_granule)
			fputs(line, out);
		else if (!strncmp(line, "granule", 7))
			past_granule = 1;
	}
	free(line);
	fclose(in);
	if (!past_granule) {
		fprintf(stderr, "profile_gen: %s has no granule line\n", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long n = 200000, counts = 2, granule = 4096, after = ~0ull;
	const char *body = NULL, *outpath = NULL;
	int dup = 0, opt;
	while ((opt = getopt(argc, argv, "n:c:g:i:a:do:")) != -1) {
		char *e = NULL;
		switch (opt) {
		case 'n': n = strtoull(optarg, &e, 10); break;
		case 'c': counts = strtoull(optarg, &e, 10); break;
		case 'g': granule = strtoull(optarg, &e, 10); break;
		case 'a': after = strtoull(optarg, &e, 10); break;
		case 'i': body = optarg; break;
		case 'd': dup = 1; break;
		case 'o': outpath = optarg; break;
		default: return usage();
		}
		if (e && *e)
			return usage();
	}
	if (optind != argc || granule == 0 || (dup && n < 2))
		return usage();
	if (after > n)
		after = n / 2;
	FILE *out = outpath ? fopen(outpath, "w") : stdout;
	if (!out) {
		perror(outpath);
		return 2;
	}
	fprintf(out, "enormoustext-profile 1\ngranule %llu\n", granule);
	for (unsigned long long i = 0; i <= n; i++) {
		if (i == after && body && copy_body(out, body) != 0)
			return 2;
		if (i == n)
			break;
		char bid[41];
		gen_build_id(dup && i == n - 1 ? 0 : i, bid);
		fprintf(out, "object %s /fleet/build-%llu/lib/libgen%llu.so\n", bid, i % 97, i);
		/* granules of the second 2 MiB of text, three apart */
		for (unsigned long long k = 0; k < counts; k++)
			fprintf(out, "%llx %llu\n", 0x200000ull + k * 3 * granule, (i * 7 + k) % 1000 + 1);
	}
	if (fflush(out) != 0 || ferror(out) || (outpath && fclose(out) != 0)) {
		perror(outpath ? outpath : "stdout");
		return 2;
	}
	return 0;
}
