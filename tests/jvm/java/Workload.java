// SPDX-License-Identifier: MIT
// The JVM tests' and benchmark's workload: six distinct hot methods (hot*),
// each a loop of its own with small helpers C2 inlines into it, called in
// rounds until a stop file appears (or, for the benchmark, for a number of
// rounds, printing rounds per second).
//   java letw.test.Workload STOP_FILE [--handles]
//                                               run until STOP_FILE exists
//                                               (at most 300 s, and not
//                                               past its parent's exit);
//                                               --handles: watch the parent
//                                               with ProcessHandle (below)
//   java letw.test.Workload --rounds N [GO_FILE] N timed rounds (after a
//                                               warm-up, and GO_FILE), exit
// The tests keep C2 from inlining the hot methods into the driver
// (-XX:CompileCommand=dontinline,letw.test.Workload::hot*), so each has a
// compiled body of its own that perf samples land in.
package letw.test;

import java.io.File;

public final class Workload {
	static long sink;

	static long scramble(long x) {
		x ^= x >>> 31;
		x *= 0x9E3779B97F4A7C15L;
		return x ^ (x >>> 29);
	}

	static long hotMix(long[] a) {
		long h = 17;
		for (int i = 0; i < a.length; i++) {
			a[i] = scramble(a[i] + i);
			h = h * 31 + a[i];
		}
		return h;
	}

	static int hotSieve(boolean[] composite) {
		int n = composite.length, count = 0;
		java.util.Arrays.fill(composite, false);
		for (int i = 2; i < n; i++) {
			if (composite[i])
				continue;
			count++;
			for (long j = (long) i * i; j < n; j += i)
				composite[(int) j] = true;
		}
		return count;
	}

	static double dot(double[] a, int ai, double[] b, int bi, int n, int stride) {
		double s = 0;
		for (int k = 0; k < n; k++)
			s += a[ai + k] * b[bi + k * stride];
		return s;
	}

	static double hotMatmul(double[] a, double[] b, double[] c, int n) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				c[i * n + j] = dot(a, i * n, b, j, n, n);
		return c[n + 1];
	}

	static final int[] CRC_TABLE = new int[256];
	static {
		for (int i = 0; i < 256; i++) {
			int c = i;
			for (int k = 0; k < 8; k++)
				c = (c & 1) != 0 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
			CRC_TABLE[i] = c;
		}
	}

	static int crcStep(int crc, byte b) {
		return CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >>> 8);
	}

	static int hotCrc(byte[] data) {
		int crc = ~0;
		for (byte b : data)
			crc = crcStep(crc, b);
		return ~crc;
	}

	static void hotSort(int[] a, long seed) {
		for (int i = 0; i < a.length; i++)
			a[i] = (int) scramble(seed + i);
		// Shell sort: no JDK code in the hot path.
		for (int gap = a.length / 2; gap > 0; gap /= 2)
			for (int i = gap; i < a.length; i++) {
				int v = a[i], j = i;
				while (j >= gap && a[j - gap] > v) {
					a[j] = a[j - gap];
					j -= gap;
				}
				a[j] = v;
			}
	}

	static int collatzLen(long n) {
		int steps = 0;
		while (n != 1) {
			n = (n & 1) == 0 ? n >>> 1 : 3 * n + 1;
			steps++;
		}
		return steps;
	}

	static long hotCollatz(long from, int count) {
		long best = 0;
		for (long n = from; n < from + count; n++)
			best = Math.max(best, collatzLen(n));
		return best;
	}

	static final long[] MIX = new long[1 << 14];
	static final boolean[] SIEVE = new boolean[1 << 17];
	static final int N = 48;
	static final double[] A = new double[N * N], B = new double[N * N], C = new double[N * N];
	static final byte[] DATA = new byte[1 << 16];
	static final int[] SORT = new int[1 << 12];

	static void round(long r) {
		sink += hotMix(MIX);
		sink += hotSieve(SIEVE);
		sink += (long) hotMatmul(A, B, C, N);
		sink += hotCrc(DATA);
		hotSort(SORT, r);
		sink += SORT[7];
		sink += hotCollatz(1 + (r & 1023) * 1000, 1000);
	}

	static boolean handles;

	// The parent's pid: it changes (to a subreaper or 1) once the parent is
	// gone. With --handles from ProcessHandle.parent(), whose implementation
	// runs lambdas: HotSpot then compiles method handle intrinsics
	// (MethodHandle.linkToStatic, invokeBasic, ...), code the attach test
	// wants in its checked set. Otherwise from /proc/self/stat, which adds
	// no compiled code of its own.
	static long ppid() throws java.io.IOException {
		if (handles)
			return ProcessHandle.current().parent().map(ProcessHandle::pid).orElse(1L);
		byte[] b;
		try (java.io.FileInputStream in = new java.io.FileInputStream("/proc/self/stat")) {
			b = in.readAllBytes();
		}
		String st = new String(b, java.nio.charset.StandardCharsets.US_ASCII);
		// "pid (comm) state ppid ...": comm may hold spaces, not ')' last.
		String[] f = st.substring(st.lastIndexOf(')') + 2).split(" ");
		return Long.parseLong(f[1]);
	}

	public static void main(String[] args) throws Exception {
		for (int i = 0; i < A.length; i++) {
			A[i] = i % 7;
			B[i] = i % 5;
		}
		for (int i = 0; i < DATA.length; i++)
			DATA[i] = (byte) scramble(i);
		if (args.length >= 2 && args[0].equals("--rounds")) {
			int rounds = Integer.parseInt(args[1]);
			for (int r = 0; r < rounds / 4; r++) // warm-up
				round(r);
			// The benchmark starts its session meanwhile.
			for (int i = 0; args.length > 2 && !new File(args[2]).exists(); i++) {
				if (i > 6000)
					throw new IllegalStateException("no go file");
				Thread.sleep(10);
			}
			// Wall time, this thread's CPU time (what the machine's other
			// load barely changes), and the whole process's CPU time (the
			// JIT, GC and lttng-etw's control thread included).
			java.lang.management.ThreadMXBean tm = java.lang.management.ManagementFactory.getThreadMXBean();
			com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
				java.lang.management.ManagementFactory.getOperatingSystemMXBean();
			long t0 = System.nanoTime(), c0 = tm.getCurrentThreadCpuTime(), p0 = os.getProcessCpuTime();
			for (int r = 0; r < rounds; r++)
				round(r);
			double s = (System.nanoTime() - t0) / 1e9;
			double c = (tm.getCurrentThreadCpuTime() - c0) / 1e9;
			double p = (os.getProcessCpuTime() - p0) / 1e9;
			System.out.printf("rounds_per_s %.2f%n", rounds / s);
			System.out.printf("rounds_per_cpu_s %.2f%n", rounds / c);
			System.out.printf("process_cpu_ms_per_round %.4f%n", p * 1e3 / rounds);
			System.out.println("sink " + sink);
			return;
		}
		File stop = new File(args[0]);
		handles = args.length > 1 && args[1].equals("--handles");
		// Bound the run even if the test that started us vanished: a wall
		// clock limit, and the parent (the test's shell) gone.
		long deadline = System.nanoTime() + 300_000_000_000L;
		long parent = ppid();
		for (long r = 0; !stop.exists(); r++) {
			round(r);
			if (r % 64 == 0 && (System.nanoTime() - deadline > 0 || ppid() != parent)) {
				System.out.println("no stop file: time limit or parent gone");
				System.exit(3);
			}
		}
		System.out.println("sink " + sink);
	}
}
