# SPDX-License-Identifier: MIT
"""Minimal client of the lttng-etw control socket (provider/ctlproto.h),
written independently of the C code so the tests check the wire protocol
itself. Usage: letw_ctl.py PID {ping|status|capture} [MASK], or PID address (the
process's control socket name, as ss(8) prints it)."""
import os
import socket
import struct
import sys

MAGIC = 0x4C455457
VERSION = 1
TYPES = {"ping": 1, "capture": 2, "status": 3}
REQ = struct.Struct("=IHHQQ")                  # 24 bytes
REP = struct.Struct("=IHHiIQQQQQQQIHH")        # see struct letw_ctl_reply
REP_FIELDS = ("magic", "version", "type", "status", "passes", "request_id",
              "pass_id", "emitted", "skipped_raced", "rundown_mask",
              "last_dcstart_pass_id", "last_dcend_pass_id", "pid",
              "instance_id", "pending_statedumps")


def address(pid):
    """The abstract name of the process we see as pid:
    lttng-etw/<its pid namespace's inode>/<its pid there>."""
    with open("/proc/%d/status" % pid) as f:
        nspid = [line.split()[1:] for line in f if line.startswith("NSpid:")][0]
    # One level: our namespace (no need to inspect the target's).
    ns = os.stat("/proc/%s/ns/pid" % ("self" if len(nspid) == 1 else pid)).st_ino
    return "\0lttng-etw/%d/%s" % (ns, nspid[-1])


def request(pid, kind, mask=0, request_id=1, timeout=60.0, raw=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(address(pid))
        s.send(raw if raw is not None else
               REQ.pack(MAGIC, VERSION, TYPES[kind], mask, request_id))
        data = s.recv(4096)
    finally:
        s.close()
    if len(data) != REP.size:
        raise RuntimeError("reply of %d bytes, expected %d" % (len(data), REP.size))
    rep = dict(zip(REP_FIELDS, REP.unpack(data)))
    if rep["magic"] != MAGIC:
        raise RuntimeError("bad reply magic")
    if rep["type"] == TYPES["status"]:
        # A STATUS reply's skipped_raced is the last pass's payload
        # bytes (LETW_CTL_STATUS_EMITTED in provider/ctlproto.h): named
        # for what it holds, so no test reads it as a count of records.
        rep["last_pass_bytes"] = rep.pop("skipped_raced")
    return rep


def main():
    pid = int(sys.argv[1])
    kind = sys.argv[2]
    if kind == "address":
        # As ss(8) prints an abstract name: '@' for the leading NUL.
        print("@" + address(pid)[1:])
        return 0
    mask = int(sys.argv[3], 0) if len(sys.argv) > 3 else 0
    rep = request(pid, kind, mask)
    print(" ".join("%s=%d" % (k, v) for k, v in rep.items()))
    return 0 if rep["status"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
