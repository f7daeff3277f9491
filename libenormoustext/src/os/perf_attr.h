/*
 * perf_attr.h — the sampling event both recorders use (the library's
 * ENORMOUSTEXT_RECORD and the command's `enormoustext record`): the software
 * cpu-clock event, HZ samples a second, IP and TID in each sample, inherited
 * by new threads, user space only.  Include after <linux/perf_event.h>.
 */
#ifndef ET_PERF_ATTR_H
#define ET_PERF_ATTR_H

#include <string.h>

static inline void et_cpu_clock_attr(struct perf_event_attr *a, unsigned long hz)
{
	memset(a, 0, sizeof *a);
	a->size = sizeof *a;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = hz;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a->inherit = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

#endif
