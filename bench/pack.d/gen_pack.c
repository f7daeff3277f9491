/*
 * gen_pack.c — writes the C source of a synthetic program for bench/pack:
 * FUNCS small functions, each in its own section .text.pk_I (the name
 * -ffunction-sections gives it, so that a linker can reorder them: lld
 * --symbol-ordering-file, or a GNU ld script), one per STRIDE bytes; in
 * each group of HOT_EVERY functions one, at a pseudo-random place in the
 * group, is hot.  The steady state calls only the hot ones, so the hot set
 * is spread evenly over every 2 MiB window of the text until a linker packs
 * it together.
 *
 *   gen_pack DIR FUNCS STRIDE HOT_EVERY [PARTS]
 *
 * writes DIR/f0.c ... DIR/fPARTS-1.c (the functions, in order; PARTS files
 * to compile in parallel, default 1), DIR/main.c (the tables and the
 * driver) and DIR/hot.txt (the names of the hot functions, one a line).
 * Compile with -fno-toplevel-reorder and link f0.o ... main.o in that
 * order.  The program:
 *
 *   prog [CALLS]
 *
 * calls every function once and checks its result (the cold ones run
 * there and never again, as start-up code would), draws a sequence of
 * 64 Ki calls among the hot functions, then makes CALLS calls (after a
 * warm-up of CALLS/10) and prints the steady-state time per call, measured
 * inside the process (start-up and the library's remap are not in it), and
 * how much of its text is on huge pages (from its own smaps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the place of the hot function in group g: a fixed pseudo-random one */
static long hot_slot(long g, long every)
{
	unsigned long long x = (unsigned long long)g * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (long)(x % (unsigned long long)every);
}

static FILE *open_in(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

static void close_or_die(FILE *f)
{
	if (fclose(f) != 0) {
		perror("gen_pack");
		exit(1);
	}
}

static const char driver[] =
	"static uint64_t now_ns(void)\n"
	"{\n"
	"  struct timespec t;\n"
	"  clock_gettime(CLOCK_MONOTONIC, &t);\n"
	"  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;\n"
	"}\n"
	"static uint32_t expect(long i, uint32_t x) { return (x ^ (uint32_t)(i * 40503u + 7u)) * 2654435761u + (uint32_t)i; }\n"
	"/* executable mappings and how much of them is huge, from our own smaps */\n"
	"static void text_huge(unsigned long long *text, unsigned long long *huge)\n"
	"{\n"
	"  FILE *f = fopen(\"/proc/self/smaps\", \"r\");\n"
	"  char line[4096];\n"
	"  int x = 0;\n"
	"  unsigned long long a, b, kb;\n"
	"  *text = *huge = 0;\n"
	"  if (!f)\n"
	"    return;\n"
	"  while (fgets(line, sizeof line, f)) {\n"
	"    char perms[8];\n"
	"    if (sscanf(line, \"%llx-%llx %7s\", &a, &b, perms) == 3) {\n"
	"      x = perms[2] == 'x';\n"
	"      if (x)\n"
	"        *text += b - a;\n"
	"      continue;\n"
	"    }\n"
	"    if (x && (sscanf(line, \"AnonHugePages: %llu kB\", &kb) == 1 || sscanf(line, \"FilePmdMapped: %llu kB\", &kb) == 1\n"
	"              || sscanf(line, \"Private_Hugetlb: %llu kB\", &kb) == 1))\n"
	"      *huge += kb * 1024;\n"
	"  }\n"
	"  fclose(f);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"  long calls = argc > 1 ? atol(argv[1]) : 20000000;\n"
	"  /* every function once: the cold ones run here and never again */\n"
	"  for (long i = 0; i < NFUNCS; i++)\n"
	"    if (all[i](12345u) != expect(i, 12345u)) {\n"
	"      fprintf(stderr, \"wrong result: function %ld\\n\", i);\n"
	"      return 1;\n"
	"    }\n"
	"  /* the call sequence, drawn before timing: 64 Ki calls among the hot\n"
	"   * functions, over and over (the loop is one load and one indirect call) */\n"
	"  enum { SEQ = 65536 };\n"
	"  static pk_fn seq[SEQ];\n"
	"  uint64_t state = 88172645463325252ull;\n"
	"  for (int s = 0; s < SEQ; s++) {\n"
	"    state ^= state << 13; state ^= state >> 7; state ^= state << 17;\n"
	"    seq[s] = all[hot_index[state % NHOT]];\n"
	"  }\n"
	"  uint32_t acc = 1;\n"
	"  uint64_t t0 = 0;\n"
	"  for (long c = -calls / 10; c < calls; c++) {\n"
	"    if (c == 0)\n"
	"      t0 = now_ns();\n"
	"    acc += seq[c & (SEQ - 1)](acc);\n"
	"  }\n"
	"  uint64_t dt = now_ns() - t0;\n"
	"  unsigned long long tb, hb;\n"
	"  text_huge(&tb, &hb);\n"
	"  printf(\"calls %ld ns_per_call %.3f functions %d hot %d acc %u text_bytes %llu huge_text_bytes %llu\\n\",\n"
	"         calls, (double)dt / (double)(calls > 0 ? calls : 1), NFUNCS, NHOT, acc, tb, hb);\n"
	"  return 0;\n"
	"}\n";

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s DIR FUNCS STRIDE HOT_EVERY [PARTS]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	long n = strtol(argv[2], NULL, 10), stride = strtol(argv[3], NULL, 10), every = strtol(argv[4], NULL, 10);
	long parts = argc > 5 ? strtol(argv[5], NULL, 10) : 1;
	if (n <= 0 || stride < 128 || (stride & (stride - 1)) || every <= 0 || every > n || parts <= 0 || parts > n ||
	    parts > 64) {
		fprintf(stderr, "gen_pack: FUNCS > 0, STRIDE a power of two >= 128, 0 < HOT_EVERY <= FUNCS, "
		                "0 < PARTS <= min(FUNCS, 64)\n");
		return 2;
	}
	/* Function I starts at cache line 1 + (37 I mod 63) of its own STRIDE
	 * bytes (of its page, with STRIDE 4096): one page per call, the lines
	 * over every cache set.  The padding is in the function's own section,
	 * so it moves with the function when the linker reorders sections;
	 * `.balign` gives the section the STRIDE alignment. */
	for (long p = 0; p < parts; p++) {
		char name[32];
		snprintf(name, sizeof name, "f%ld.c", p);
		FILE *f = open_in(dir, name);
		fprintf(f, "/* generated by gen_pack: part %ld of %ld */\n#include <stdint.h>\n", p + 1, parts);
		for (long i = n * p / parts; i < n * (p + 1) / parts; i++) {
			fprintf(f, "__asm__(\".pushsection .text.pk_%ld,\\\"ax\\\",@progbits\\n.balign %ld\\n.skip %ld, 0xcc\\n"
			           ".popsection\");\n",
			        i, stride, (1 + (i * 37) % 63) * 64 % stride);
			fprintf(f, "__attribute__((noinline, aligned(64), section(\".text.pk_%ld\"))) uint32_t pk_%ld(uint32_t x)"
			           " { return (x ^ %luu) * 2654435761u + %ldu; }\n",
			        i, i, (unsigned long)(i * 40503u + 7u), i);
		}
		close_or_die(f);
	}
	FILE *m = open_in(dir, "main.c"), *h = open_in(dir, "hot.txt");
	fprintf(m, "/* generated by gen_pack: %ld functions, one per %ld bytes, one in %ld hot */\n", n, stride, every);
	fprintf(m, "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n");
	fprintf(m, "typedef uint32_t (*pk_fn)(uint32_t);\n");
	for (long i = 0; i < n; i++)
		fprintf(m, "uint32_t pk_%ld(uint32_t);\n", i);
	fprintf(m, "static pk_fn const all[%ld] = {\n", n);
	for (long i = 0; i < n; i++)
		fprintf(m, "  pk_%ld,\n", i);
	fprintf(m, "};\nstatic const long hot_index[] = {\n");
	long nhot = 0;
	for (long g = 0; g * every < n; g++) {
		long i = g * every + hot_slot(g, every);
		if (i >= n)
			continue;
		fprintf(m, "  %ld,\n", i);
		fprintf(h, "pk_%ld\n", i);
		nhot++;
	}
	fprintf(m, "};\nenum { NFUNCS = %ld, NHOT = %ld };\n", n, nhot);
	fputs(driver, m);
	close_or_die(m);
	close_or_die(h);
	return 0;
}
