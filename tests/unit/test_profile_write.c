/*
 * test_profile_write.c — the profile writer and the merge (core/profile.c):
 * what is written parses back as it was given (objects, paths, counts, an
 * object without counts, a path with a newline); what the parser would
 * refuse is not written; random profiles merged give, for every build-id
 * and granule, the exact sum of the inputs, in build-id order, each object
 * named by the first profile that has it; different granules are refused
 * with nothing written; the writer through an et_out.
 */
#include "unit_util.h"

#include "core/outfile.h"
#include "core/profile.h"

TestSuite(profile_write, .timeout = 60, .fini = ut_cleanup);

struct mem {
	char *buf;
	size_t len, cap;
};

static void mem_write(void *ctx, const char *s, size_t n)
{
	struct mem *m = ctx;
	if (m->len + n + 1 > m->cap) {
		m->cap = (m->len + n + 1) * 2;
		m->buf = realloc(m->buf, m->cap);
		cr_assert_not_null(m->buf);
	}
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
}

static struct et_sink mem_sink(struct mem *m, char *buf, size_t cap)
{
	memset(m, 0, sizeof *m);
	return (struct et_sink){ .write = mem_write, .ctx = m, .buf = buf, .cap = cap };
}

static void parse_ok(struct et_profile *p, const struct mem *m)
{
	int e = et_profile_parse(p, m->buf, m->len);
	cr_assert_eq(e, 0, "the writer's output does not parse: %s\n%s", p->err, m->buf);
}

/* ----------------------------------------------------------- round trip */

Test(profile_write, round_trip)
{
	struct mem m;
	char buf[32];
	struct et_sink s = mem_sink(&m, buf, sizeof buf);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &s, 4096, "a comment\nthat would end its line");
	cr_expect_eq(et_profile_write_object(&w, "0123456789abcdef0123456789abcdef01234567", "/usr/bin/a b"), 0);
	cr_expect_eq(et_profile_write_count(&w, 0, 3), 0);
	cr_expect_eq(et_profile_write_count(&w, 0x1000, UINT64_MAX - 3), 0);
	cr_expect_eq(et_profile_write_count(&w, 0x7fff0000, 0), 0);
	cr_expect_eq(et_profile_write_object(&w, "ee", "/lib/idle.so"), 0);     /* no counts */
	cr_expect_eq(et_profile_write_object(&w, "AB", "/lib/new\nline\r.so"), 0);
	cr_expect_eq(et_profile_write_count(&w, 0x2000, 9), 0);
	cr_expect_eq(et_profile_write_object(&w, "cd", ""), 0);
	et_profile_write_end(&w);

	struct et_profile p;
	parse_ok(&p, &m);
	cr_expect_eq(p.granule, 4096);
	cr_assert_eq(p.nobjs, 4);
	cr_expect_str_eq(p.objs[0].build_id, "0123456789abcdef0123456789abcdef01234567");
	cr_expect_str_eq(et_profile_path(&p, &p.objs[0]), "/usr/bin/a b");
	cr_assert_eq(p.objs[0].n, 3);
	cr_expect_eq(p.objs[0].total, UINT64_MAX);
	cr_expect_eq(p.ents[p.objs[0].first + 1].vaddr, 0x1000);
	cr_expect_eq(p.ents[p.objs[0].first + 1].count, UINT64_MAX - 3);
	cr_expect_eq(p.ents[p.objs[0].first + 2].vaddr, 0x7fff0000);
	cr_expect_eq(p.objs[1].n, 0);
	cr_expect_str_eq(et_profile_path(&p, &p.objs[1]), "/lib/idle.so");
	cr_expect_str_eq(p.objs[2].build_id, "ab");
	cr_expect_str_eq(et_profile_path(&p, &p.objs[2]), "/lib/new?line?.so");
	cr_expect_eq(et_profile_heat(&p, &p.objs[2], 0, UINT64_MAX), 9);
	cr_expect_str_eq(et_profile_path(&p, &p.objs[3]), "");
	/* the comment is one line */
	cr_expect_not_null(strstr(m.buf, "\n# a comment?that would end its line\n"), "%s", m.buf);
	et_profile_free(&p);
	free(m.buf);
}

Test(profile_write, the_exact_text)
{
	struct mem m;
	struct et_sink s = mem_sink(&m, NULL, 0);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &s, 64, NULL);
	et_profile_write_object(&w, "beef", "/p");
	et_profile_write_count(&w, 0x40, 2);
	et_profile_write_count(&w, 0xffffffffffffffc0ull, 18446744073709551615ull);
	et_profile_write_end(&w);
	cr_expect_str_eq(m.buf, "enormoustext-profile 1\ngranule 64\nobject beef /p\n40 2\n"
	                        "ffffffffffffffc0 18446744073709551615\n");
	free(m.buf);
}

Test(profile_write, what_the_parser_refuses_is_not_written)
{
	struct mem m;
	struct et_sink s = mem_sink(&m, NULL, 0);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &s, 4096, NULL);
	cr_expect_eq(et_profile_write_count(&w, 0, 1), -EINVAL, "a count before any object");
	cr_expect_eq(et_profile_write_object(&w, "a", "/one/digit"), -EINVAL);
	cr_expect_eq(et_profile_write_count(&w, 0, 1), -EINVAL, "a count of a refused object");
	cr_expect_eq(et_profile_write_object(&w, "0123456789abcdef0123456789abcdef012345678", "/41"), -EINVAL);
	cr_expect_eq(et_profile_write_object(&w, "", "/empty"), -EINVAL);
	cr_expect_eq(et_profile_write_object(&w, "xy", "/not/hex"), -EINVAL);
	cr_expect_eq(et_profile_write_object(&w, "a b", "/space"), -EINVAL);
	cr_expect_eq(et_profile_write_object(&w, "aa", "/ok"), 0);
	cr_expect_eq(et_profile_write_count(&w, 0x1001, 1), -EINVAL, "not a granule's start");
	cr_expect_eq(et_profile_write_count(&w, 0x2000, 1), 0);
	cr_expect_eq(et_profile_write_count(&w, 0x2000, 1), -EINVAL, "the same address again");
	cr_expect_eq(et_profile_write_count(&w, 0x1000, 1), -EINVAL, "an address going back");
	cr_expect_eq(et_profile_write_count(&w, 0x3000, 4), 0);
	/* a new object starts its addresses again */
	cr_expect_eq(et_profile_write_object(&w, "bb", "/ok2"), 0);
	cr_expect_eq(et_profile_write_count(&w, 0, 1), 0);
	et_profile_write_end(&w);
	struct et_profile p;
	parse_ok(&p, &m);
	cr_assert_eq(p.nobjs, 2, "%s", m.buf);
	cr_expect_eq(p.objs[0].n, 2);
	cr_expect_eq(p.objs[0].total, 5);
	cr_expect_eq(p.objs[1].n, 1);
	cr_expect_null(strstr(m.buf, "one/digit"));
	et_profile_free(&p);
	free(m.buf);
}

Test(profile_write, through_an_et_out)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	ut_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/p.prof", dir);
	struct et_out o;
	cr_assert_eq(et_out_open(&o, path, 0), 0);
	char buf[8];
	struct et_sink s;
	et_out_sink(&s, &o, buf, sizeof buf);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &s, 64, "via et_out");
	et_profile_write_object(&w, "cafe", "/bin/x");
	for (uint64_t a = 0; a < 1000; a++)
		et_profile_write_count(&w, a * 64, a + 1);
	et_profile_write_end(&w);
	cr_assert_eq(et_out_commit(&o), 0);
	struct et_profile p;
	cr_assert_eq(et_profile_load(&p, path), 0, "%s", p.err);
	cr_assert_eq(p.nobjs, 1);
	cr_expect_eq(p.objs[0].n, 1000);
	cr_expect_eq(p.objs[0].total, 1000 * 1001 / 2);
	et_profile_free(&p);
	ut_rmtree(dir);
}

/* ---------------------------------------------------------------- merge */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#define POOL 12
#define ADDRS 40

/* A random profile of objects from a pool of build-ids (some of them with
 * no counts), as text, parsed. */
static void random_profile(struct et_profile *p, uint64_t *seed, int index, const char (*pool)[41])
{
	struct mem m;
	struct et_sink s = mem_sink(&m, NULL, 0);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &s, 64, NULL);
	for (int b = 0; b < POOL; b++) {
		if (rnd(seed) % 3 == 0)
			continue;
		char path[128];
		snprintf(path, sizeof path, "/lib/%.40s-from-%d.so", pool[b], index);
		cr_assert_eq(et_profile_write_object(&w, pool[b], path), 0);
		if (rnd(seed) % 4 == 0)
			continue;                       /* loaded, never run */
		for (uint64_t a = 0; a < ADDRS; a++)
			if (rnd(seed) % 3 == 0)
				cr_assert_eq(et_profile_write_count(&w, a * 64, rnd(seed) % 1000000000), 0);
	}
	et_profile_write_end(&w);
	parse_ok(p, &m);
	free(m.buf);
}

Test(profile_write, merge_is_exact)
{
	uint64_t seed = 0x243f6a8885a308d3ull;
	for (int round = 0; round < 40; round++) {
		/* build-ids of different lengths: their order is strcmp's */
		char pool[POOL][41];
		for (int b = 0; b < POOL; b++) {
			bool dup;
			do {
				int bytes = 1 + (int)(rnd(&seed) % 20);
				unsigned char raw[20];
				for (int k = 0; k < bytes; k++)
					raw[k] = (unsigned char)rnd(&seed);
				et_hex_build_id(raw, (size_t)bytes, pool[b]);
				dup = false;
				for (int c = 0; c < b; c++)
					dup |= !strcmp(pool[c], pool[b]);
			} while (dup);
		}
		size_t n = 1 + rnd(&seed) % 5;
		struct et_profile ps[5];
		for (size_t i = 0; i < n; i++)
			random_profile(&ps[i], &seed, (int)i, pool);

		struct mem m;
		char buf[64];
		struct et_sink s = mem_sink(&m, buf, sizeof buf);
		cr_assert_eq(et_profile_merge(ps, n, &s, "merged"), 0);
		struct et_profile out;
		parse_ok(&out, &m);
		cr_expect_eq(out.granule, 64);

		/* every object of the inputs, once, in build-id order, named by
		 * the first input that has it; every granule the exact sum */
		size_t want_objs = 0;
		for (int b = 0; b < POOL; b++) {
			const struct et_prof_obj *mo = et_profile_find(&out, pool[b]);
			int first = -1;
			for (size_t i = 0; i < n && first < 0; i++)
				if (et_profile_find(&ps[i], pool[b]))
					first = (int)i;
			if (first < 0) {
				cr_expect_null(mo, "round %d: %s is in no input but in the merge", round, pool[b]);
				continue;
			}
			want_objs++;
			cr_assert_not_null(mo, "round %d: %s lost", round, pool[b]);
			char path[128];
			snprintf(path, sizeof path, "/lib/%.40s-from-%d.so", pool[b], first);
			cr_expect_str_eq(et_profile_path(&out, mo), path, "round %d", round);
			uint64_t total = 0;
			for (uint64_t a = 0; a < ADDRS; a++) {
				uint64_t sum = 0;
				for (size_t i = 0; i < n; i++) {
					const struct et_prof_obj *o = et_profile_find(&ps[i], pool[b]);
					if (o)
						sum += et_profile_heat(&ps[i], o, a * 64, a * 64 + 64);
				}
				cr_expect_eq(et_profile_heat(&out, mo, a * 64, a * 64 + 64), sum,
				             "round %d, %s, granule %llu", round, pool[b], (unsigned long long)a);
				total += sum;
			}
			cr_expect_eq(mo->total, total);
			/* a count line only where there are samples in some input */
			for (uint32_t k = 0; k < mo->n; k++) {
				bool somewhere = false;
				uint64_t va = out.ents[mo->first + k].vaddr;
				for (size_t i = 0; i < n && !somewhere; i++) {
					const struct et_prof_obj *o = et_profile_find(&ps[i], pool[b]);
					for (uint32_t e = 0; o && e < o->n; e++)
						somewhere |= ps[i].ents[o->first + e].vaddr == va;
				}
				cr_expect(somewhere, "round %d: a count at 0x%llx no input has", round,
				          (unsigned long long)va);
			}
		}
		cr_expect_eq(out.nobjs, want_objs, "round %d", round);
		for (size_t k = 1; k < out.nobjs; k++)
			cr_expect_lt(strcmp(out.objs[k - 1].build_id, out.objs[k].build_id), 0,
			             "round %d: objects not in build-id order", round);
		et_profile_free(&out);
		for (size_t i = 0; i < n; i++)
			et_profile_free(&ps[i]);
		free(m.buf);
	}
}

static void parse_text(struct et_profile *p, const char *t)
{
	int e = et_profile_parse(p, t, strlen(t));
	cr_assert_eq(e, 0, "%s", p->err);
}

Test(profile_write, merge_saturates_and_keeps_idle_objects)
{
	struct et_profile ps[2];
	parse_text(&ps[0], "enormoustext-profile 1\ngranule 4096\nobject bb /b\n0 18446744073709551615\n"
	                   "object dd /lib/idle.so\n");
	parse_text(&ps[1], "enormoustext-profile 1\ngranule 4096\nobject BB /b-too\n0 1\n1000 2\n"
	                   "object dd /elsewhere\n");
	struct mem m;
	struct et_sink s = mem_sink(&m, NULL, 0);
	cr_assert_eq(et_profile_merge(ps, 2, &s, "merged from 2 profile(s)"), 0);
	cr_expect_str_eq(m.buf, "enormoustext-profile 1\ngranule 4096\n# merged from 2 profile(s)\n"
	                        "object bb /b\n0 18446744073709551615\n1000 2\nobject dd /lib/idle.so\n");
	free(m.buf);
	et_profile_free(&ps[0]);
	et_profile_free(&ps[1]);
}

Test(profile_write, merge_refuses_different_granules)
{
	struct et_profile ps[2];
	parse_text(&ps[0], "enormoustext-profile 1\ngranule 4096\nobject aa /a\n0 1\n");
	parse_text(&ps[1], "enormoustext-profile 1\ngranule 8192\nobject aa /a\n0 1\n");
	struct mem m;
	struct et_sink s = mem_sink(&m, NULL, 0);
	cr_expect_eq(et_profile_merge(ps, 2, &s, NULL), -EINVAL);
	cr_expect_eq(m.len, 0, "a refused merge wrote: %s", m.buf);
	cr_expect_eq(et_profile_merge(ps, 0, &s, NULL), -EINVAL);
	/* one profile merged alone is itself */
	cr_assert_eq(et_profile_merge(ps, 1, &s, NULL), 0);
	cr_expect_str_eq(m.buf, "enormoustext-profile 1\ngranule 4096\nobject aa /a\n0 1\n");
	free(m.buf);
	et_profile_free(&ps[0]);
	et_profile_free(&ps[1]);
}
