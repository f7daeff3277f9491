/*
 * bigcode.h — about 4.3 MiB of machine code for the examples, so that there
 * is something worth putting on huge pages: 1100 functions, each a run of
 * 4 KiB of no-op instructions and an add.  Include it in one file.
 */
#ifndef EXAMPLE_BIGCODE_H
#define EXAMPLE_BIGCODE_H

#if defined(__x86_64__) || defined(__i386__)
#define BC_FILL __asm__ volatile(".fill 4096, 1, 0x90")            /* nop */
#elif defined(__aarch64__)
#define BC_FILL __asm__ volatile(".fill 1024, 4, 0xd503201f")      /* nop */
#else
#define BC_FILL do { } while (0)
#endif

#define BC_F(n) __attribute__((noinline)) static int bc_f##n(int x) { BC_FILL; return x + n; }
#define BC_10(n) BC_F(n##0) BC_F(n##1) BC_F(n##2) BC_F(n##3) BC_F(n##4) \
                 BC_F(n##5) BC_F(n##6) BC_F(n##7) BC_F(n##8) BC_F(n##9)
#define BC_100(n) BC_10(n##0) BC_10(n##1) BC_10(n##2) BC_10(n##3) BC_10(n##4) \
                  BC_10(n##5) BC_10(n##6) BC_10(n##7) BC_10(n##8) BC_10(n##9)
BC_100(1) BC_100(2) BC_100(3) BC_100(4) BC_100(5) BC_100(6) BC_100(7) BC_100(8) BC_100(9)
BC_100(10) BC_100(11)

#define BC_R(n) bc_f##n,
#define BC_R10(n) BC_R(n##0) BC_R(n##1) BC_R(n##2) BC_R(n##3) BC_R(n##4) \
                  BC_R(n##5) BC_R(n##6) BC_R(n##7) BC_R(n##8) BC_R(n##9)
#define BC_R100(n) BC_R10(n##0) BC_R10(n##1) BC_R10(n##2) BC_R10(n##3) BC_R10(n##4) \
                   BC_R10(n##5) BC_R10(n##6) BC_R10(n##7) BC_R10(n##8) BC_R10(n##9)
static int (*const bc_table[])(int) = {
	BC_R100(1) BC_R100(2) BC_R100(3) BC_R100(4) BC_R100(5) BC_R100(6) BC_R100(7) BC_R100(8)
	BC_R100(9) BC_R100(10) BC_R100(11)
};

/* Run all of it once; returns a checksum. */
static int bc_run(void)
{
	int s = 0;
	for (unsigned i = 0; i < sizeof bc_table / sizeof *bc_table; i++)
		s = bc_table[i](s) & 0xffffff;
	return s;
}
#endif
