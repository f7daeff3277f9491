#!/usr/bin/python3
"""perfdata_seed.py DIR — small perf.data files (file mode and pipe mode)
for fuzz_perfdata's seed corpus: one cpu-clock event (IP, TID, TIME,
PERIOD; sample_id_all), a COMM, a FORK, an MMAP2 with a build-id, an MMAP
without, samples out of time order, a LOST record, and the HEADER_BUILD_ID
feature.  Written here by hand, as perf's perf.data-file-format.txt lays
them out."""
import os
import struct
import sys

IP, TID, TIME, PERIOD, IDENT = 1, 2, 4, 256, 1 << 16


def rec(typ, misc, body):
    body += b"\0" * (-len(body) % 8)
    return struct.pack("<IHH", typ, misc, 8 + len(body)) + body


def attr(stype):
    a = bytearray(128)
    struct.pack_into("<IIQQQQQ", a, 0, 1, 128, 0, 999, stype, 0, (1 << 18) | (1 << 8) | (1 << 10))
    return bytes(a)


def trailer(pid, t):
    return struct.pack("<IIQ", pid, pid, t)


def events(stype):
    pid = 4242
    out = rec(3, 1 << 13, struct.pack("<II", pid, pid) + b"prog\0" + b"\0" * 3 + trailer(pid, 5))
    out += rec(7, 0, struct.pack("<IIIIQ", pid, pid, pid + 1, pid, 6) + trailer(pid, 6))
    bid = bytes(range(1, 21))
    out += rec(10, 1 << 14, struct.pack("<IIQQQ", pid, pid, 0x400000, 0x10000, 0x1000) +
               struct.pack("<BBH", 20, 0, 0) + bid + struct.pack("<II", 5, 2) + b"/usr/bin/prog\0" +
               trailer(pid, 10))
    out += rec(1, 0, struct.pack("<IIQQQ", pid, pid, 0x7f0000000000, 0x2000, 0) + b"/lib/x.so\0" + trailer(pid, 11))
    for t, ip in ((30, 0x401234), (20, 0x401240), (40, 0x7f0000000100)):
        body = b""
        if stype & IDENT:
            body += struct.pack("<Q", 77)
        body += struct.pack("<QIIQQ", ip, pid, pid + 1, t, 1000)
        out += rec(9, 2, body)
    out += rec(2, 0, struct.pack("<QQ", 77, 3) + trailer(pid, 50))
    return out


def build_id_section():
    e = struct.pack("<i", -1) + bytes(range(1, 21)) + bytes([0, 0, 0, 0]) + b"/usr/bin/prog\0"
    e += b"\0" * (-len(e) % 8)
    return struct.pack("<IHH", 67, 2 | (1 << 15), 8 + len(e)) + e[:4] + e[4:24] + bytes([20, 0, 0, 0]) + e[28:]


def file_mode(stype):
    a = attr(stype)
    ids_off = 104
    attrs_off = ids_off + 8
    data_off = attrs_off + len(a) + 16
    data = events(stype)
    feat_table = data_off + len(data)
    bsec = build_id_section()
    bsec_off = feat_table + 16
    hdr = b"PERFILE2" + struct.pack("<QQQQQQQQ", 104, len(a) + 16, attrs_off, len(a) + 16, data_off, len(data), 0, 0)
    hdr += struct.pack("<QQQQ", 1 << 2, 0, 0, 0)
    out = hdr + struct.pack("<Q", 77) + a + struct.pack("<QQ", ids_off, 8) + data
    out += struct.pack("<QQ", bsec_off, len(bsec)) + bsec
    return out


def pipe_mode(stype):
    a = attr(stype)
    out = b"PERFILE2" + struct.pack("<Q", 16)
    out += rec(64, 0, a + struct.pack("<Q", 77))
    out += build_id_section()
    out += events(stype)
    return out


d = sys.argv[1]
os.makedirs(d, exist_ok=True)
for name, data in (("file.data", file_mode(IP | TID | TIME | PERIOD)),
                   ("file-ident.data", file_mode(IDENT | IP | TID | TIME | PERIOD)),
                   ("pipe.data", pipe_mode(IP | TID | TIME | PERIOD))):
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)
