# gen-bigcode.awk — writes a Java program with a large hot code cache for
# bench/run's jit suite, into DIR: N classes C0..C<N-1>, each with L leaf
# methods of S statements of straight-line long arithmetic (constants of
# their own: no two alike) and P methods that each call K of the leaves.
# The leaves are small enough for C2 to inline where it is hot (under
# -XX:FreqInlineSize), so each of the P methods compiles to K leaves' worth
# of code of its own: the compiled code is about N * P * K * S statements,
# many times the source.  BigCode.java, the driver, calls every one of them
# round-robin.
#
#   awk -v n=N -v l=L -v s=S -v p=P -v k=K -v dir=DIR -f gen-bigcode.awk
#
# java -cp DIR BigCode QUIET_S ROUNDS [MARK]: warm-up rounds until the JIT
# has compiled nothing for QUIET_S seconds (the compilation MXBean's total
# time stands still), then creates the file MARK (the steady state has
# begun), runs ROUNDS timed rounds and prints "checksum C seconds T rounds R
# warmup_rounds W warmup_seconds WS compile_ms M".
BEGIN {
	srand(1)
	for (c = 0; c < n; c++) {
		f = sprintf("%s/C%d.java", dir, c)
		printf "final class C%d {\n", c > f
		for (j = 0; j < l; j++) {
			printf "\tstatic long f%d(long x) {\n", j > f
			for (i = 0; i < s; i++)
				printf "\t\tx = (x * %dL + %dL) ^ (x >>> %d);\n", 2 * int(rand() * 1000000) + 3, int(rand() * 1000000000), 1 + int(rand() * 40) > f
			printf "\t\treturn x;\n\t}\n" > f
		}
		for (j = 0; j < p; j++) {
			printf "\tstatic long g%d(long x) {\n", j > f
			for (i = 0; i < k; i++)
				printf "\t\tx = f%d(x);\n", int(rand() * l) > f
			printf "\t\treturn x;\n\t}\n" > f
		}
		printf "\tstatic long run(long x) {\n" > f
		for (j = 0; j < p; j++)
			printf "\t\tx = g%d(x);\n", j > f
		printf "\t\treturn x;\n\t}\n}\n" > f
		close(f)
	}
	f = dir "/BigCode.java"
	printf "import java.lang.management.*;\nimport java.nio.file.*;\n" > f
	printf "public final class BigCode {\n\tstatic long round(long x) {\n" > f
	for (c = 0; c < n; c++)
		printf "\t\tx = C%d.run(x);\n", c > f
	printf "\t\treturn x;\n\t}\n" > f
	printf "\tpublic static void main(String[] a) throws Exception {\n" > f
	printf "\t\tdouble quiet = Double.parseDouble(a[0]);\n\t\tint rounds = Integer.parseInt(a[1]);\n" > f
	printf "\t\tCompilationMXBean jit = ManagementFactory.getCompilationMXBean();\n" > f
	printf "\t\tlong x = 1, w = 0, t0 = System.nanoTime(), last = t0, ms = -1;\n" > f
	# warm-up: until the JIT has compiled nothing for QUIET seconds
	printf "\t\tfor (;;) {\n\t\t\tx = round(x);\n\t\t\tw++;\n" > f
	printf "\t\t\tlong c = jit.getTotalCompilationTime(), t = System.nanoTime();\n" > f
	printf "\t\t\tif (c != ms) { ms = c; last = t; } else if (t - last > (long) (quiet * 1e9)) break;\n\t\t}\n" > f
	printf "\t\tlong t1 = System.nanoTime();\n" > f
	printf "\t\tif (a.length > 2) Files.write(Paths.get(a[2]), new byte[0]);\n" > f
	printf "\t\tfor (int r = 0; r < rounds; r++) x = round(x);\n" > f
	printf "\t\tlong t2 = System.nanoTime();\n" > f
	printf "\t\tSystem.out.printf(\"checksum %%d seconds %%.4f rounds %%d warmup_rounds %%d warmup_seconds %%.3f compile_ms %%d%%n\", x, (t2 - t1) / 1e9, rounds, w, (t1 - t0) / 1e9, jit.getTotalCompilationTime());\n" > f
	printf "\t}\n}\n" > f
	close(f)
}
