# SPDX-License-Identifier: MIT
"""Stop one thread of a process, and only that one, until told to let it go:
a pass that lasts as long as the test needs, without the timing of a slow
one. ptrace(PTRACE_SEIZE) + PTRACE_INTERRUPT stop a single thread (SIGSTOP
would stop them all, lttng-ust's listener too); the thread resumes at
PTRACE_DETACH, or when this process dies whatever the reason (the kernel
detaches a dead tracer's tracees), so a failed test never leaves it stopped.

The thread is only kept stopped inside poll(2): lttng-etw's control thread
sits there holding none of its locks, so the statedump callbacks of the
listener thread (hook_lock) go on. Stopped elsewhere, it is let go and
stopped again a little later.

usage: hold_thread.py PID COMM HELD_FILE RELEASE_FILE [MAX_SECONDS]
Writes HELD_FILE once the thread is stopped, lets it go once RELEASE_FILE
exists (or after MAX_SECONDS, default 60, then exits 1). Needs the right to
ptrace PID (root, or the same uid under ptrace_scope 0). Linux x86_64 and
aarch64."""
import ctypes
import os
import platform
import sys
import time

PTRACE_CONT = 7
PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000
POLL_SYSCALLS = {"x86_64": {7, 271}, "aarch64": {73}}[platform.machine()]

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]


def ptrace(req, tid, data=0):
    if libc.ptrace(req, tid, None, ctypes.c_void_p(data)) == -1:
        e = ctypes.get_errno()
        raise OSError(e, "ptrace(%#x, %d): %s" % (req, tid, os.strerror(e)))


def find_thread(pid, comm):
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().strip() == comm:
                return int(tid)
    raise SystemExit("hold_thread: process %d has no thread %r" % (pid, comm))


def in_poll(pid, tid):
    """The stopped thread was in poll(2) (the syscall it will restart)."""
    with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
        nr = f.read().split()[0]
    return nr not in ("running", "-1") and int(nr) in POLL_SYSCALLS


def main():
    pid, comm, held, release = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    max_s = float(sys.argv[5]) if len(sys.argv) > 5 else 60.0
    tid = find_thread(pid, comm)
    ptrace(PTRACE_SEIZE, tid)
    for attempt in range(1000):
        ptrace(PTRACE_INTERRUPT, tid)
        os.waitpid(tid, WALL)
        if in_poll(pid, tid):
            break
        ptrace(PTRACE_CONT, tid)
        time.sleep(0.001)
    else:
        raise SystemExit("hold_thread: thread %d never stopped in poll(2)" % tid)
    with open(held, "w") as f:
        f.write("%d\n" % tid)
    deadline = time.monotonic() + max_s
    while not os.path.exists(release):
        if time.monotonic() > deadline:
            ptrace(PTRACE_DETACH, tid)
            raise SystemExit("hold_thread: no %s after %g s; let go" % (release, max_s))
        time.sleep(0.01)
    ptrace(PTRACE_DETACH, tid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
