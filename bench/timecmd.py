#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timecmd.py OUT CMD [ARG...]: run CMD and write "WALL USER SYS" (seconds)
to OUT, like `/usr/bin/time -f '%e %U %S' -o OUT`, but to the microsecond:
GNU time prints 10 ms steps, ~5 % of the 0.2 s the analysis benchmark's
reading limit takes on a fast host, coarser than the differences it
compares. Wall time from a monotonic clock around the child, CPU time
from getrusage(RUSAGE_CHILDREN) (the child and every descendant it
waited for). Exits with CMD's status (128 + N for a signal)."""
import os
import resource
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out, cmd = sys.argv[1], sys.argv[2:]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        rc = subprocess.call(cmd)
    except OSError as e:
        sys.stderr.write("timecmd.py: %s: %s\n" % (cmd[0], e.strerror))
        return 127
    t1 = time.perf_counter()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        f.write("%.6f %.6f %.6f\n" % (t1 - t0, r1.ru_utime - r0.ru_utime,
                                      r1.ru_stime - r0.ru_stime))
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
