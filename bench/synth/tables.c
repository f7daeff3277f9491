/* The two tables of a synthetic program: its executable's and its library's. */
#include <stdint.h>

typedef uint32_t (*synth_fn)(uint32_t);
extern const synth_fn sx_table[], sl_table[];
extern const long sx_count, sl_count;

const synth_fn *synth_tables[] = { sx_table, sl_table };
const long *synth_counts[] = { &sx_count, &sl_count };
int synth_ntables = 2;
