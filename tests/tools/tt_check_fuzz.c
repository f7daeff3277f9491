/*
 * tt_check_fuzz — `enormoustext check` on hostile input, in process (the
 * command's own analysis code, check_elf.c, is linked in), so that every
 * case costs microseconds and ASan/UBSan see each buffer's exact end.
 *
 *   tt_check_fuzz FILE [FLIPS [SEED]]
 *
 * 1. FILE itself must pass (exit status 0, nothing on the error stream),
 *    in text and in JSON.
 * 2. Every prefix of FILE, lengths 0 .. size-1, each in a malloc'd buffer
 *    of exactly that length: one shorter than the end of the last
 *    structure the ELF headers describe must be rejected with status 1 and
 *    exactly one error line naming the file; one that still holds every
 *    structure must pass.  Then the same for a copy without section
 *    headers, whose segments are then what a prefix cuts short.
 * 3. FLIPS copies (default 3000) with 1 to 8 random bytes changed (fixed
 *    seeds SEED, SEED+1, ...; half of the changes in the headers, where
 *    parsing is delicate): status 0 with no error line, or status 1 with
 *    exactly one error line naming the file.  Never anything else, never a
 *    crash.
 * Prints one summary line; "FAIL: ..." lines and exit 1 on a violation.
 */
#include "check_elf.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *NAME = "fuzzed.so";
static int failures;

/* Run the analysis on buf[0..len); returns the status, checks the error
 * stream's shape. */
static int one(const unsigned char *src, size_t len, bool json, const char *what)
{
	unsigned char *buf = malloc(len ? len : 1);
	if (!buf) {
		printf("FAIL: out of memory\n");
		exit(1);
	}
	memcpy(buf, src, len);
	char *errtext = NULL, *outtext = NULL;
	size_t errlen = 0, outlen = 0;
	FILE *err = open_memstream(&errtext, &errlen);
	FILE *out = open_memstream(&outtext, &outlen);
	struct et_check_opts o = { .pmd_size = 2u << 20, .page_size = 4096, .pad_threshold = 4096,
	                           .json = json };
	struct et_json j;
	et_json_init(&j, out);
	int rc = et_check_image(NAME, buf, len, &o, out, &j, err);
	fclose(err);
	fclose(out);
	size_t lines = 0;
	for (size_t i = 0; i < errlen; i++)
		lines += errtext[i] == '\n';
	if (rc != 0 && rc != 1) {
		printf("FAIL: %s: status %d (expected 0 or 1)\n", what, rc);
		failures++;
	} else if (rc == 0 && errlen) {
		printf("FAIL: %s: passed but wrote to the error stream: %s", what, errtext);
		failures++;
	} else if (rc == 1 && (lines != 1 || errtext[errlen - 1] != '\n' || !strstr(errtext, NAME))) {
		printf("FAIL: %s: rejected with %zu error lines (expected one naming %s): %s\n", what,
		       lines, NAME, errtext);
		failures++;
	} else if (rc == 0 && outlen == 0) {
		printf("FAIL: %s: passed but printed nothing\n", what);
		failures++;
	}
	free(errtext);
	free(outtext);
	free(buf);
	return rc;
}

/* The end of the last structure the (native, 64-bit) headers describe. */
static size_t needed_size(const unsigned char *b, size_t len)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)b;
	size_t need = sizeof *eh;
	if (len < sizeof *eh || b[EI_CLASS] != ELFCLASS64)
		return len;
	if (eh->e_phnum)
		need = need > eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize ? need
		       : eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;
	if (eh->e_shnum)
		need = need > eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize ? need
		       : eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(const void *)(b + eh->e_phoff + i * sizeof *ph);
		if (ph->p_type != PT_NULL && ph->p_filesz && ph->p_offset + ph->p_filesz > need)
			need = ph->p_offset + ph->p_filesz;
	}
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(const void *)(b + eh->e_shoff + i * sizeof *sh);
		if (sh->sh_type != SHT_NOBITS && sh->sh_size && sh->sh_offset + sh->sh_size > need)
			need = sh->sh_offset + sh->sh_size;
	}
	return need;
}

/* Every prefix of img: those shorter than what the headers describe must be
 * rejected, the others must pass.  Returns how many were rejected. */
static size_t prefixes(const unsigned char *img, size_t len, const char *label, size_t *need_out)
{
	size_t need = needed_size(img, len), rejected = 0;
	*need_out = need;
	if (need > len) {
		printf("FAIL: %sthe headers describe %zu bytes, the file has %zu\n", label, need, len);
		failures++;
		return 0;
	}
	if (one(img, len, false, label) != 0) {
		printf("FAIL: %sthe whole file does not pass\n", label);
		failures++;
		return 0;
	}
	for (size_t l = 0; l < len && failures <= 20; l++) {
		char what[96];
		snprintf(what, sizeof what, "%sprefix of %zu bytes", label, l);
		int rc = one(img, l, l % 2 == 1, what);
		if (l < need && rc != 1) {
			printf("FAIL: %s (the headers need %zu): not rejected\n", what, need);
			failures++;
		}
		if (l >= need && rc != 0) {
			printf("FAIL: %s holds every structure (%zu bytes) but was rejected\n", what, need);
			failures++;
		}
		rejected += rc == 1;
	}
	return rejected;
}

/* xorshift64*: the same sequence for the same seed everywhere. */
static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: tt_check_fuzz FILE [FLIPS [SEED]]\n");
		return 2;
	}
	long flips = argc > 2 ? atol(argv[2]) : 3000;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	unsigned char *img = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			img = realloc(img, cap);
			if (!img)
				return 2;
		}
		size_t r = fread(img + len, 1, cap - len, f);
		if (r == 0)
			break;
		len += r;
	}
	fclose(f);

	if (one(img, len, false, "the whole file") != 0 || one(img, len, true, "the whole file (json)") != 0) {
		printf("FAIL: %s itself does not pass\n", argv[1]);
		return 1;
	}
	size_t need = 0, rejected = prefixes(img, len, "", &need);
	/* The same without section headers (as `strip --strip-section-headers`
	 * or sstrip leave a file): then the segments are what a prefix cuts. */
	unsigned char *bare = malloc(len);
	memcpy(bare, img, len);
	Elf64_Ehdr *beh = (Elf64_Ehdr *)(void *)bare;
	beh->e_shoff = 0;
	beh->e_shnum = 0;
	beh->e_shstrndx = 0;
	size_t bneed = 0, brejected = prefixes(bare, len, "without section headers, ", &bneed);
	free(bare);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)img;
	size_t hdr_end = eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;
	size_t sh_start = eh->e_shoff < len ? eh->e_shoff : 0;
	unsigned char *copy = malloc(len);
	size_t ok = 0, bad = 0;
	for (long k = 0; k < flips && failures <= 20; k++) {
		rng_state = (seed + (uint64_t)k) * 0x9E3779B97F4A7C15ull + 1;
		memcpy(copy, img, len);
		int n = 1 + (int)(rnd() % 8);
		for (int i = 0; i < n; i++) {
			uint64_t r = rnd();
			size_t pos;
			switch (r % 4) {
			case 0:
			case 1: pos = (size_t)(rnd() % (hdr_end < len ? hdr_end : len)); break;   /* ELF + program headers */
			case 2: pos = sh_start + (size_t)(rnd() % (len - sh_start)); break;     /* section headers */
			default: pos = (size_t)(rnd() % len); break;
			}
			unsigned char x = (unsigned char)(rnd() % 255 + 1);
			copy[pos] ^= x;
		}
		char what[64];
		snprintf(what, sizeof what, "flip case %llu", (unsigned long long)(seed + (uint64_t)k));
		if (one(copy, len, k % 2 == 1, what) == 0)
			ok++;
		else
			bad++;
	}
	free(copy);
	free(img);
	printf("tt_check_fuzz: %s: %zu bytes; %zu prefixes, %zu rejected (those shorter than %zu); "
	       "without section headers %zu rejected (shorter than %zu); "
	       "%zu flipped copies: %zu passed, %zu rejected; %d failures\n", argv[1], len, len, rejected,
	       need, brejected, bneed, ok + bad, ok, bad, failures);
	return failures ? 1 : 0;
}
