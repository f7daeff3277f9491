/*
 * fuzz_profile.c — libFuzzer target for the profile parser
 * (libenormoustext/src/core/profile.c), the code a hostile ENORMOUSTEXT_PROFILE
 * file reaches.  Each input is parsed; when it is accepted, every object's
 * heat is summed over its whole address space.  Built and run by run.sh.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct et_profile p;
	if (et_profile_parse(&p, (const char *)data, size) != 0)
		return 0;
	for (size_t i = 0; i < p.nobjs; i++) {
		if (p.objs[i].first + p.objs[i].n > p.nents)
			__builtin_trap();
		(void)et_profile_heat(&p, &p.objs[i], 0, UINT64_MAX);
		(void)et_profile_path(&p, &p.objs[i]);
	}
	et_profile_free(&p);
	return 0;
}
