/*
 * fuzz_perfdata.c — libFuzzer target for the perf.data reader of
 * `enormoustext profile import` (tools/enormoustext/perfdata.c), the code a
 * hostile or truncated perf.data reaches.  Each input is read; every field
 * of every event and build-id it hands on is touched (names to their NUL,
 * build-ids to their length), so a read outside the input is ASan's to
 * see.  Built and run by run.sh (seeds: perfdata_seed.py).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sink += p[i];
}

static void on_buildid(void *ctx, const struct et_pd_buildid *b)
{
	(void)ctx;
	if (b->len > 20)
		__builtin_trap();
	touch(b->id, b->len);
	sink += strlen(b->path) + (uint64_t)b->pid + b->cpumode;
}

static void on_event(void *ctx, const struct et_pd_event *e)
{
	(void)ctx;
	sink += e->pid + e->tid + e->ppid + e->ptid + e->ip + e->addr + e->len + e->pgoff + e->exec;
	if (e->name)
		sink += strlen(e->name);
	if (e->build_id) {
		if (e->build_id_len > 20)
			__builtin_trap();
		touch(e->build_id, e->build_id_len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct et_pd_ops ops = { NULL, on_buildid, on_event };
	struct et_pd_info info;
	char err[256];
	if (et_perfdata_read(data, size, &ops, &info, err, sizeof err) != 0 && !err[0])
		__builtin_trap();           /* a refusal always says why */
	return 0;
}
