/* tt_small — a small shared library for the `check` tests: its build-id is
 * fixed at link time (CMakeLists.txt) and it is what the fuzz test cuts and
 * flips. */
int tt_small_add(int a, int b);
int tt_small_add(int a, int b)
{
	return a + b;
}
