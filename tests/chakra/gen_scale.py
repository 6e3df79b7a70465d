#!/usr/bin/env python3
"""A large Chakra ET for the reader's and executor's speed (docs/chakra.md, "Scale"): NPUS ranks of NODES nodes
each, a chain in which every 10th node is an all-reduce of 1 MiB over every rank and the others compute nodes
of 1 to 7 us. Every rank's file is the same bytes (ids are per file), so it is written once and copied.

usage: gen_scale.py OUTDIR/PREFIX NPUS NODES
"""
import shutil
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from gen_microbench import attr_bool, attr_int64, delimited, field_len, field_varint  # noqa: E402


def main():
    prefix, npus, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    out = bytearray(delimited(field_len(1, b"1.0.0")))
    for i in range(nodes):
        coll = i % 10 == 9
        n = field_varint(1, i) + field_varint(3, 7 if coll else 4)
        if i:
            n += field_varint(5, i - 1)  # data_deps
        if coll:
            n += field_len(10, attr_int64("comm_type", 0)) + field_len(10, attr_int64("comm_size", 1 << 20))
        else:
            n += field_varint(7, i % 7 + 1) + field_len(10, attr_bool("is_cpu_op", False))
        out += delimited(n)
    first = "%s.0.et" % prefix
    with open(first, "wb") as f:
        f.write(out)
    for r in range(1, npus):
        shutil.copyfile(first, "%s.%d.et" % (prefix, r))


if __name__ == "__main__":
    main()
