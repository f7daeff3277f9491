#!/usr/bin/python3
"""tt_pprof.py OUT [--gzip] [--type TYPE/UNIT]... [--mapping ID:START:LIMIT:OFFSET:PATH:BUILDID]...
              [--sample ADDR:MAPID:V1,V2,...[:pid=N][:comm=NAME]]...

Writes a pprof profile (profile.proto, field numbers as upstream's
proto/profile.proto) with the protobuf wire format encoded here by hand
(no protobuf library: an encoder independent of the one under test).
Each sample gets a leaf location at ADDR in mapping MAPID (0: none) and a
caller location 0x40 bytes further on (only the leaf should count).
Numbers may be hex (0x...).  Used by tool_profile_import.
"""
import gzip
import sys


def varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_varint(field, n):
    return key(field, 0) + varint(n) if n else b""


def f_bytes(field, data):
    return key(field, 2) + varint(len(data)) + data


def f_packed(field, nums):
    return f_bytes(field, b"".join(varint(n) for n in nums)) if nums else b""


def num(s):
    return int(s, 0)


def main(argv):
    out, gz = argv[0], False
    strings, types, mappings, samples = [""], [], [], []

    def sid(s):
        if s not in strings:
            strings.append(s)
        return strings.index(s)

    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--gzip":
            gz = True
            i += 1
            continue
        v = argv[i + 1]
        i += 2
        if a == "--type":
            t, u = v.split("/")
            types.append((sid(t), sid(u)))
        elif a == "--mapping":
            mid, start, limit, off, path, bid = v.split(":")
            mappings.append((num(mid), num(start), num(limit), num(off), sid(path), sid(bid)))
        elif a == "--sample":
            parts = v.split(":")
            labels = []
            for p in parts[3:]:
                k, val = p.split("=")
                labels.append((sid(k), 0, num(val)) if k == "pid" else (sid(k), sid(val), 0))
            samples.append((num(parts[0]), num(parts[1]), [num(x) for x in parts[2].split(",")], labels))
        else:
            sys.exit("tt_pprof.py: unknown argument " + a)
    body = b""
    for t, u in types:
        body += f_bytes(1, f_varint(1, t) + f_varint(2, u))
    locs = []
    for n, (addr, mid, values, labels) in enumerate(samples):
        leaf, caller = 2 * n + 1, 2 * n + 2
        locs.append((leaf, mid, addr))
        locs.append((caller, mid, addr + 0x40))
        s = f_packed(1, [leaf, caller]) + f_packed(2, values)
        for k, sv, nv in labels:
            s += f_bytes(3, f_varint(1, k) + f_varint(2, sv) + f_varint(3, nv))
        body += f_bytes(2, s)
    for mid, start, limit, off, path, bid in mappings:
        body += f_bytes(3, f_varint(1, mid) + f_varint(2, start) + f_varint(3, limit) + f_varint(4, off) +
                        f_varint(5, path) + f_varint(6, bid))
    for lid, mid, addr in locs:
        body += f_bytes(4, f_varint(1, lid) + f_varint(2, mid) + f_varint(3, addr))
    for s in strings:
        body += f_bytes(6, s.encode())
    body += f_varint(9, 1700000000000000000)          # time_nanos: a field the reader skips
    with open(out, "wb") as f:
        f.write(gzip.compress(body) if gz else body)


main(sys.argv[1:])
