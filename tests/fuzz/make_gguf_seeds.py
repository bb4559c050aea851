#!/usr/bin/env python3
"""Writes the GGUF seed corpus (tests/fuzz/corpus_gguf/) with struct, independently of the
hadamix reader and of the gguf package. ok_* must be accepted, bad_* rejected
(tests/fuzz/fuzz_replay.c). Run from the repository root; the output is deterministic."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_gguf")


def s(x):
    b = x.encode() if isinstance(x, str) else x
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, payload):
    return s(key) + struct.pack("<I", vtype) + payload


def file(kvs, tensors, align=32, version=3, magic=b"GGUF", data_fill=None):
    """tensors: (name, dims, ggml type, nbytes); laid out in order, each aligned."""
    head = magic + struct.pack("<IQQ", version, len(tensors), len(kvs)) + b"".join(kvs)
    off, infos, blobs = 0, b"", []
    for name, dims, t, nbytes in tensors:
        infos += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d)
                                                                   for d in dims)
        infos += struct.pack("<IQ", t, off)
        blobs.append((off, nbytes))
        off = (off + nbytes + align - 1) // align * align
    b = head + infos
    b += b"\0" * ((-len(b)) % align)
    data = bytearray()
    for o, n in blobs:
        data += b"\0" * (o - len(data))
        data += bytes((i * 37 + o) & 0xFF for i in range(n))
    return b + bytes(data)


ARCH = kv("general.architecture", 8, s("llama"))
KVS = [ARCH,
       kv("llama.block_count", 4, struct.pack("<I", 2)),
       kv("llama.rope.freq_base", 6, struct.pack("<f", 10000.0)),
       kv("t.bool", 7, b"\x01"),
       kv("t.i64", 11, struct.pack("<q", -7)),
       kv("t.f64", 12, struct.pack("<d", 0.5)),
       kv("t.ints", 9, struct.pack("<IQ", 5, 3) + struct.pack("<iii", 1, -2, 3)),
       kv("tokenizer.ggml.tokens", 9, struct.pack("<IQ", 8, 3) + s("a") + s("") + s("\u0120b"))]
TENSORS = [("f32", [4], 0, 16), ("q8_0", [32], 8, 34), ("q4_1", [32, 1], 3, 20),
           ("q4_0", [32], 2, 18), ("q6_k", [256], 14, 210), ("bf16", [2], 30, 4),
           ("f16", [2, 1, 1], 1, 4), ("q4_k", [256], 12, 144), ("q5_k", [256, 1], 13, 176),
           ("q5_0", [32, 2], 6, 44), ("q5_1", [64], 7, 48), ("q2_k", [256], 10, 84),
           ("q3_k", [256, 1], 11, 110), ("iq4_nl", [32, 2], 20, 36), ("iq4_xs", [256], 23, 136)]


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "ok_all_types.gguf": file(KVS, TENSORS),
        "ok_header_only.gguf": file([], []),
        "ok_align8_zero_size.gguf": file([ARCH, kv("general.alignment", 4, struct.pack("<I", 8))],
                                         [("e", [0, 3], 0, 0), ("x", [2], 0, 8)], align=8),
        "ok_iq3_s_not_dequantized.gguf": file([ARCH], [("k", [256], 21, 110)]),
        "bad_magic.gguf": file([ARCH], TENSORS[:1], magic=b"GGUG"),
        "bad_version2.gguf": file([ARCH], TENSORS[:1], version=2),
        "bad_truncated.gguf": file(KVS, TENSORS)[:-1],
        "bad_nested_array.gguf": file([kv("a", 9, struct.pack("<IQ", 9, 0))], []),
        "bad_alignment3.gguf": file([kv("general.alignment", 4, struct.pack("<I", 3))], []),
        "bad_dup_key.gguf": file([ARCH, ARCH], []),
        "bad_bool2.gguf": file([kv("b", 7, b"\x02")], []),
        "bad_partial_block.gguf": file([ARCH], [("q", [16], 8, 17)]),
        "bad_huge_count.gguf": b"GGUF" + struct.pack("<IQQ", 3, 1 << 40, 1 << 40),
    }
    # overlap: the second tensor's offset points at the first
    ov = bytearray(file([ARCH], [("a", [8], 0, 32), ("b", [8], 0, 32)]))
    i = ov.find(s("b")) + len(s("b")) + 4 + 8 + 4
    ov[i:i + 8] = struct.pack("<Q", 0)
    seeds["bad_overlap.gguf"] = bytes(ov)
    for name, b in sorted(seeds.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(b)
    print(f"{len(seeds)} seeds in {OUT}")


if __name__ == "__main__":
    main()
