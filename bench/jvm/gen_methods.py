# SPDX-License-Identifier: MIT
"""Write the Java sources of a JVM holding many compiled methods, for the
DCStart benchmark (bench/jvm/run.sh).

usage: gen_methods.py OUT_DIR CLASSES METHODS_PER_CLASS

letw/bench/G<k>.java each hold METHODS_PER_CLASS small static methods m<i>
and a run() calling each of them 400 times (C1 compiles a method after
~200 calls with -XX:TieredStopAtLevel=1; the benchmark keeps run() from
inlining them). letw/bench/GenMain.java runs every class, prints "ready"
and waits for a stop file:  java letw.bench.GenMain CLASSES STOP_FILE
"""
import os
import sys


def main():
    out, classes, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    pkg = os.path.join(out, "letw", "bench")
    os.makedirs(pkg, exist_ok=True)
    for k in range(classes):
        body = ["package letw.bench;", "public final class G%d {" % k]
        for i in range(per):
            body.append("  static int m%d(int x) { return (x * %d + %d) ^ (x >>> %d); }"
                        % (i, 2 * i + 3, k, 1 + i % 29))
        body.append("  public static int run(int x) {")
        body.append("    for (int r = 0; r < 400; r++) {")
        for i in range(per):
            body.append("      x = m%d(x);" % i)
        body.append("    }")
        body.append("    return x;")
        body.append("  }")
        body.append("}")
        with open(os.path.join(pkg, "G%d.java" % k), "w") as f:
            f.write("\n".join(body) + "\n")
    with open(os.path.join(pkg, "GenMain.java"), "w") as f:
        f.write("""package letw.bench;
public final class GenMain {
  public static void main(String[] a) throws Exception {
    int n = Integer.parseInt(a[0]), x = 1;
    for (int k = 0; k < n; k++)
      x += (int) Class.forName("letw.bench.G" + k).getMethod("run", int.class).invoke(null, x);
    System.out.println("ready " + x);
    java.io.File stop = new java.io.File(a[1]);
    while (!stop.exists())
      Thread.sleep(20);
  }
}
""")
    return 0


if __name__ == "__main__":
    sys.exit(main())
