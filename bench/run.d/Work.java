// Work.java — a CPU-bound Java workload for bench/run's Java suite: what
// services do (collections, strings, formatting, sorting, a little
// reflection and lambdas), across many methods so that the JIT compiles a
// sizeable amount of code.  Prints a checksum and its own time.
import java.util.*;
import java.util.function.*;
import java.util.stream.*;

public class Work {
	record Item(int id, String name, double v, List<String> tags) {}

	static long round(int r) {
		List<Item> items = new ArrayList<>();
		for (int i = 0; i < 20000; i++)
			items.add(new Item(i, "item" + i, Math.sqrt(i + r), List.of("a" + (i % 7), "b" + (i % 11))));
		Map<String, Double> byTag = new HashMap<>();
		for (Item it : items)
			byTag.merge(String.join("-", it.tags()), it.v(), Double::sum);
		StringBuilder sb = new StringBuilder();
		for (Item it : items.subList(0, 5000))
			sb.append(String.format("%d:%s:%.3f;", it.id(), it.name(), it.v()));
		String text = sb.toString();
		int hits = 0;
		for (int k = text.indexOf("7:"); k >= 0; k = text.indexOf("7:", k + 1))
			hits++;
		List<String> words = Arrays.stream(text.split("[:;]")).filter(w -> w.length() > 3).sorted().collect(Collectors.toList());
		TreeMap<Integer, Integer> tm = new TreeMap<>();
		for (Item it : items)
			tm.merge(it.name().hashCode() & 1023, 1, Integer::sum);
		long s = hits + words.size() + byTag.size() + tm.firstKey() + tm.lastKey();
		s += items.stream().mapToLong(it -> (long) (it.v() * 10)).filter(x -> x % 3 == 0).sum();
		Function<Integer, Integer> f = x -> x * 31 + 7;
		for (int i = 0; i < 1000; i++) {
			final int m = i;
			s += f.andThen(y -> y ^ m).apply(i);
		}
		try {
			s += Item.class.getRecordComponents().length + Item.class.getMethod("name").getName().length();
		} catch (NoSuchMethodException e) {
			throw new RuntimeException(e);
		}
		return s;
	}

	public static void main(String[] args) {
		long t0 = System.nanoTime();
		int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
		long sum = 0;
		for (int r = 0; r < rounds; r++)
			sum = (sum + round(r)) % 1000000007L;
		System.out.printf("checksum %d seconds %.3f%n", sum, (System.nanoTime() - t0) / 1e9);
	}
}
