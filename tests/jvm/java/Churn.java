// SPDX-License-Identifier: MIT
// JVM test 3: code cache churn. Each round defines one of four payload
// classes (Churn$P0..P3, different code) in a fresh class loader of our
// own, calls it until it is compiled, and drops the loader; every few
// rounds a GC unloads the dropped classes, and HotSpot unloads their
// compiled code and reuses its memory for later rounds' code.
//   java letw.test.Churn CLASS_DIR GO_FILE ROUNDS [HOLD_PREFIX HOLDS]
// waits for GO_FILE (the test's session is recording by then), runs
// ROUNDS rounds, prints "rounds N", exits 0. With HOLD_PREFIX, it stops
// HOLDS times, evenly spaced, never before the first round or after the
// last: at stop K it creates HOLD_PREFIX.K.held and waits for the test to
// create HOLD_PREFIX.K.done. Every stop happens whatever the timing, so
// each capture-state the test runs meanwhile falls in the middle of the
// churn, with rounds before and after it. (Holding only while a file the
// test creates exists let a fast JVM run past the last stop before a slow
// test asked for it: the test then waited in vain.)
package letw.test;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongUnaryOperator;

public final class Churn {
	static long sink;
	// Bounds every wait on the test, should the test have vanished.
	static final long WAIT_LIMIT_MS = 120_000;

	/** Defines Churn$P* itself (child first), everything else from the parent. */
	static final class Loader extends ClassLoader {
		private final Path dir;

		Loader(Path dir) {
			super(Churn.class.getClassLoader());
			this.dir = dir;
		}

		@Override
		protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
			if (!name.startsWith("letw.test.Churn$P"))
				return super.loadClass(name, resolve);
			synchronized (getClassLoadingLock(name)) {
				Class<?> c = findLoadedClass(name);
				if (c == null) {
					try {
						byte[] b = Files.readAllBytes(dir.resolve(name.replace('.', '/') + ".class"));
						c = defineClass(name, b, 0, b.length);
					} catch (java.io.IOException e) {
						throw new ClassNotFoundException(name, e);
					}
				}
				return c;
			}
		}
	}

	// The test checks P0's line table: step() is inlined into applyAsLong
	// (C1 inlines methods this small) and calls big(), too big to inline,
	// so the call's PcDesc has the stack "step at its LINE:step, inlined
	// in applyAsLong at LINE:call". The markers name those lines.
	public static final class P0 implements LongUnaryOperator {
		static long big(long x) {
			long h = x;
			for (int i = 0; i < 3; i++) {
				h ^= h >>> 33;
				h *= 0xff51afd7ed558ccdL;
				h ^= h >>> 29;
				h += i * 0x9E3779B97F4A7C15L;
			}
			return h;
		}

		static long step(long x) {
			return big(x) + 1; // LINE:step
		}

		public long applyAsLong(long x) {
			for (int i = 0; i < 16; i++)
				x = step(x); // LINE:call
			return x;
		}
	}

	public static final class P1 implements LongUnaryOperator {
		public long applyAsLong(long x) {
			long h = x;
			for (int i = 0; i < 8; i++) {
				h ^= h >>> 17;
				h *= 0xff51afd7ed558ccdL;
				h += i;
			}
			return h;
		}
	}

	public static final class P2 implements LongUnaryOperator {
		private final long[] t = new long[32];

		public long applyAsLong(long x) {
			for (int i = 0; i < t.length; i++)
				t[i] = t[(i + 7) & 31] ^ (x + i * 0x9E3779B97F4A7C15L);
			return t[(int) (x & 31)];
		}
	}

	public static final class P3 implements LongUnaryOperator {
		public long applyAsLong(long x) {
			double d = x;
			for (int i = 1; i < 12; i++)
				d = d / i + Math.sqrt(Math.abs(d) + i);
			return (long) d ^ x;
		}
	}

	static void hold(String prefix, int k) throws Exception {
		File done = new File(prefix + "." + k + ".done");
		if (!new File(prefix + "." + k + ".held").createNewFile())
			throw new IllegalStateException("stop " + k + " held twice");
		long deadline = System.currentTimeMillis() + WAIT_LIMIT_MS;
		while (!done.exists()) {
			if (System.currentTimeMillis() > deadline)
				throw new IllegalStateException("held for too long at stop " + k);
			Thread.sleep(10);
		}
	}

	public static void main(String[] args) throws Exception {
		Path dir = Path.of(args[0]);
		File go = new File(args[1]);
		int rounds = Integer.parseInt(args[2]);
		String holdPrefix = args.length > 4 ? args[3] : null;
		int holds = holdPrefix != null ? Integer.parseInt(args[4]) : 0;
		int stop = 1;
		for (int i = 0; !go.exists(); i++) {
			if (i > 6000)
				throw new IllegalStateException("no go file");
			Thread.sleep(10);
		}
		for (int r = 0; r < rounds; r++) {
			// Stop K before round K * ROUNDS / (HOLDS + 1): rounds on both sides.
			while (stop <= holds && r == (int) ((long) stop * rounds / (holds + 1)))
				hold(holdPrefix, stop++);
			Loader l = new Loader(dir);
			Class<?> c = l.loadClass("letw.test.Churn$P" + (r % 4));
			LongUnaryOperator op = (LongUnaryOperator) c.getDeclaredConstructor().newInstance();
			long s = r;
			for (int i = 0; i < 2000; i++)
				s = op.applyAsLong(s + i);
			sink += s;
			if (r % 8 == 7)
				System.gc();
		}
		System.gc();
		System.out.println("rounds " + rounds + " sink " + sink);
	}
}
