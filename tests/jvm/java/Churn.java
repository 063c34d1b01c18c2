// SPDX-License-Identifier: MIT
// JVM test 3: code cache churn. Each round defines one of four payload
// classes (Churn$P0..P3, different code) in a fresh class loader of our
// own, calls it until it is compiled, and drops the loader; every few
// rounds a GC unloads the dropped classes, and HotSpot unloads their
// compiled code and reuses its memory for later rounds' code.
//   java letw.test.Churn CLASS_DIR GO_FILE ROUNDS [HOLD_FILE]
// waits for GO_FILE (the test's session is recording by then), runs
// ROUNDS rounds, prints "rounds N", exits 0. While HOLD_FILE exists at a
// round that is a multiple of HOLD_EVERY (never the first or the last),
// it stops between two rounds and says so by creating HOLD_FILE.held,
// removed once HOLD_FILE is: a capture-state the test runs meanwhile is
// sure to fall in the middle of the churn, with rounds before and after.
package letw.test;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongUnaryOperator;

public final class Churn {
	static long sink;
	static final int HOLD_EVERY = 50;
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

	static void hold(File hold) throws Exception {
		File held = new File(hold.getPath() + ".held");
		held.createNewFile();
		long deadline = System.currentTimeMillis() + WAIT_LIMIT_MS;
		while (hold.exists()) {
			if (System.currentTimeMillis() > deadline)
				throw new IllegalStateException("held for too long");
			Thread.sleep(10);
		}
		held.delete();
	}

	public static void main(String[] args) throws Exception {
		Path dir = Path.of(args[0]);
		File go = new File(args[1]);
		int rounds = Integer.parseInt(args[2]);
		File hold = args.length > 3 ? new File(args[3]) : null;
		for (int i = 0; !go.exists(); i++) {
			if (i > 6000)
				throw new IllegalStateException("no go file");
			Thread.sleep(10);
		}
		for (int r = 0; r < rounds; r++) {
			if (hold != null && r > 0 && r % HOLD_EVERY == 0 && hold.exists())
				hold(hold);
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
