/*
 * bigtext.h — shared by the generator (gen_bigtext.c), the generated sources
 * and the checker (bigtext.c): the one definition of what every generated
 * function returns, so the checker can verify each call without a table of
 * expected values.
 *
 * Function i of object `obj` (BT_OBJ_EXE or BT_OBJ_LIB) is
 *     uint64_t f(uint64_t x) { return (x ^ bt_key(obj, i)) + i; }
 * and is called with x = bt_arg(obj, i).
 */
#ifndef BIGTEXT_H
#define BIGTEXT_H

#include <stdint.h>

#define BT_OBJ_EXE 1u
#define BT_OBJ_LIB 2u

typedef uint64_t (*bt_fn)(uint64_t);

/* splitmix64 finaliser: distinct, well-mixed constants per (object, index). */
static inline uint64_t bt_mix(uint64_t z)
{
	z += 0x9E3779B97F4A7C15ull;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline uint64_t bt_key(unsigned obj, unsigned i)
{
	return bt_mix(((uint64_t)obj << 32) | i);
}

static inline uint64_t bt_arg(unsigned obj, unsigned i)
{
	return bt_mix(((uint64_t)(obj + 16u) << 32) | i);
}

static inline uint64_t bt_expect(unsigned obj, unsigned i, uint64_t x)
{
	return (x ^ bt_key(obj, i)) + i;
}

/* Provided by the generated sources. */
extern const unsigned bt_exe_count;
extern const bt_fn bt_exe_table[];
/* Exported by libbigtext.so (a function, not data: no copy relocation in a
 * non-PIE executable, and the table holds the library's own addresses). */
const bt_fn *bt_lib_table(unsigned *count);

#endif
