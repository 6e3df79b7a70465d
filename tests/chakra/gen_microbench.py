#!/usr/bin/env python3
"""Chakra ET fixtures as ASTRA-sim's microbenchmark generator makes them, written from its documented output
(mlcommons/chakra src/generator/generator.py at 21585d8f2d65603d791d2121e3d4632351120262: for each NPU a file
NAME.<npu>.et holding a GlobalMetadata(version="1.0.0") and one COMM_COLL_NODE named after the collective, with
the attributes is_cpu_op=false, comm_type and comm_size as int64; node ids come from one counter across the
files). Our own encoder of the protobuf wire format (https://protobuf.dev/programming-guides/encoding/), with
the standard library only, so that it shares no code with hetsim's reader.

usage: gen_microbench.py OUTDIR NPUS COMM_SIZE [all_reduce|all_to_all|all_gather|reduce_scatter ...]
"""
import os
import sys

COMM_TYPE = {"all_reduce": 0, "all_gather": 2, "all_to_all": 6, "reduce_scatter": 7}
COMM_COLL_NODE = 7


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3 | 0) + varint(v)


def field_len(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def attr_int64(name, v):  # AttributeProto: name = 1, int64_val = 9
    return field_len(1, name.encode()) + field_varint(9, v)


def attr_bool(name, v):  # bool_val = 27
    return field_len(1, name.encode()) + field_varint(27, 1 if v else 0)


def delimited(msg):
    return varint(len(msg)) + msg


def main():
    outdir, npus, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    kinds = sys.argv[4:] or list(COMM_TYPE)
    os.makedirs(outdir, exist_ok=True)
    node_id = 0
    for kind in kinds:
        name = kind.upper()
        for npu in range(npus):
            meta = field_len(1, b"1.0.0")  # GlobalMetadata.version = 1
            node = field_varint(1, node_id) + field_len(2, name.encode()) + field_varint(3, COMM_COLL_NODE)
            node_id += 1
            node += field_len(10, attr_bool("is_cpu_op", False))  # Node.attr = 10
            node += field_len(10, attr_int64("comm_type", COMM_TYPE[kind]))
            node += field_len(10, attr_int64("comm_size", size))
            with open(os.path.join(outdir, "%s.%d.et" % (name, npu)), "wb") as f:
                f.write(delimited(meta) + delimited(node))


if __name__ == "__main__":
    main()
