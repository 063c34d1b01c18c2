#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check letw_runtime:method_lines / method_code_bytes events of one
process against what tests/e2e/linesapp.c published (its generator is
mirrored here).  usage: check_lines.py TRACE VPID ADDR"""
import sys

import bt2

CODE_SIZE, NR_LINES = 10000, 1200


def expected_rows():
    rows = []
    for i in range(NR_LINES):
        inl = i % 4 == 3
        off = rows[-1][0] if inl else i * 8
        rows.append((off, 100 + i, 1 if inl else (2 if i % 11 == 0 else 0),
                     1 if inl else 0))
    return rows


def main():
    path, vpid, addr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 0)
    rows, chunks, code = {}, 0, {}
    files = None
    for msg in bt2.TraceCollectionMessageIterator(path):
        if type(msg) is not bt2._EventMessageConst:
            continue
        ev = msg.event
        if int(ev["vpid"]) != vpid or int(ev["code_start"]) != addr:
            continue
        if ev.name == "letw_runtime:method_lines":
            chunks += 1
            assert int(ev["rows_total"]) == NR_LINES, ev["rows_total"]
            assert int(ev["method_id"]) == 42 and int(ev["version_id"]) == 7
            first = int(ev["row_first"])
            cols = [list(ev[c]) for c in ("native_offsets", "lines",
                                          "files_idx", "inline_depths")]
            for j in range(len(cols[0])):
                rows[first + j] = tuple(int(c[j]) for c in cols)
            files = str(ev["files"]).split("\n")
        elif ev.name == "letw_runtime:method_code_bytes":
            assert int(ev["code_size"]) == CODE_SIZE
            code[int(ev["offset"])] = bytes(int(b) for b in ev["bytes"])
    if chunks < 3:
        sys.exit("FAIL: %d method_lines chunks, expected 3" % chunks)
    if files != ["src/outer.c", "include/inl.h", ""]:
        sys.exit("FAIL: files %r" % files)
    want = expected_rows()
    got = [rows.get(i) for i in range(NR_LINES)]
    if got != want:
        bad = next(i for i in range(NR_LINES) if got[i] != want[i])
        sys.exit("FAIL: row %d is %r, expected %r" % (bad, got[bad], want[bad]))
    blob = b"".join(code[o] for o in sorted(code))
    if blob != bytes((i * 7 + 3) & 0xff for i in range(CODE_SIZE)):
        sys.exit("FAIL: code bytes differ (%d bytes in %d events)"
                 % (len(blob), len(code)))
    print("OK: %d rows in %d events, %d code bytes in %d events"
          % (NR_LINES, chunks, len(blob), len(code)))


main()
