/* tt_hot — a library with a .text.hot section (kept as its own output
 * section by hot.ld, which GNU ld would otherwise merge into .text). */
int tt_hot_fn(int x);
int tt_cold_fn(int x);
__attribute__((section(".text.hot"))) int tt_hot_fn(int x)
{
	return x * 3 + 1;
}
int tt_cold_fn(int x)
{
	return tt_hot_fn(x) + 2;
}
