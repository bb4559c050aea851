#!/usr/bin/env python3
"""Writes the model seed corpus (tests/fuzz/corpus_model_gguf/): tiny Llama GGUF files
written with struct, independently of the hadamix loader and of the gguf package, with
weights in each type the loader reads. ok_* must be accepted, bad_* rejected
(tests/fuzz/fuzz_replay.c). Run from anywhere; the output is deterministic."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_gguf_seeds import kv, s  # noqa: E402  (GGUF strings and key/value records)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_model_gguf")
F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, BF16 = 0, 1, 2, 3, 6, 7, 8, 30
Q2_K, Q3_K, Q4_K, Q5_K, IQ4_NL, IQ3_S, IQ4_XS = 10, 11, 12, 13, 20, 21, 23
IQ4_VALUES = (-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113)
U32, F32V, STR = 4, 6, 8


class Rng:
    """A small LCG: values in [-1, 1), the same on every machine."""

    def __init__(self, seed):
        self.x = seed

    def next(self):
        self.x = (self.x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return ((self.x >> 40) / float(1 << 24)) * 2.0 - 1.0


def f16(v):
    return struct.pack("<e", v)


def encode(vals, t):
    """Values (python floats, len a multiple of 32 for block types) as ggml type t."""
    if t == F32:
        return b"".join(struct.pack("<f", v) for v in vals)
    if t == F16:
        return b"".join(f16(v) for v in vals)
    if t == BF16:
        return b"".join(struct.pack("<f", v)[2:] for v in vals)
    out = b""
    for i in range(0, len(vals), 32):
        blk = vals[i:i + 32]
        amax = max(abs(v) for v in blk) or 1.0
        if t == Q8_0:
            d = amax / 127
            out += f16(d) + bytes((round(v / d) & 0xFF) for v in blk)
        elif t == Q4_0:
            d = amax / 8
            q = [min(15, max(0, round(v / d) + 8)) for v in blk]
            out += f16(d) + bytes(q[j] | q[j + 16] << 4 for j in range(16))
        elif t == Q4_1:
            lo, hi = min(blk), max(blk)
            d = (hi - lo) / 15 or 1.0
            q = [min(15, max(0, round((v - lo) / d))) for v in blk]
            out += f16(d) + f16(lo) + bytes(q[j] | q[j + 16] << 4 for j in range(16))
        elif t in (Q5_0, Q5_1):  # bit 4 of element j: bit j of the 32-bit qh
            if t == Q5_0:
                d = amax / 16
                q = [min(31, max(0, round(v / d) + 16)) for v in blk]
                head = f16(d)
            else:
                lo, hi = min(blk), max(blk)
                d = (hi - lo) / 31 or 1.0
                q = [min(31, max(0, round((v - lo) / d))) for v in blk]
                head = f16(d) + f16(lo)
            qh = sum(((x >> 4) & 1) << j for j, x in enumerate(q))
            out += head + struct.pack("<I", qh) + bytes((q[j] & 15) | (q[j + 16] & 15) << 4
                                                        for j in range(16))
    if t in (Q4_K, Q5_K):
        out = b"".join(k_block(vals[i:i + 256], t == Q5_K) for i in range(0, len(vals), 256))
    if t == Q2_K:
        out = b"".join(q2_k_block(vals[i:i + 256]) for i in range(0, len(vals), 256))
    if t == Q3_K:
        out = b"".join(q3_k_block(vals[i:i + 256]) for i in range(0, len(vals), 256))
    if t == IQ4_NL:
        out = b"".join(iq4_nibbles(vals[i:i + 32], None) for i in range(0, len(vals), 32))
    if t == IQ4_XS:
        out = b"".join(iq4_xs_block(vals[i:i + 256]) for i in range(0, len(vals), 256))
    if t == IQ3_S:  # zero blocks: the loader refuses the type before reading them
        out = bytes(110 * (len(vals) // 256))
    return out


def iq4_nibbles(blk, d):
    """32 values as IQ4 indices: the nearest of IQ4_VALUES * d (element j < 16 the low
    nibble of byte j, j + 16 its high). d None: IQ4_NL's block, f16 d first (the value of
    largest magnitude maps to -127)."""
    head = b""
    if d is None:
        big = max(blk, key=abs)
        d = struct.unpack("<e", f16(big / -127 or 1.0))[0] or 1.0
        head = f16(d)
    q = [min(range(16), key=lambda u: abs(IQ4_VALUES[u] * d - v)) for v in blk]
    return head + bytes(q[j] | q[j + 16] << 4 for j in range(16))


def iq4_xs_block(blk):
    """One IQ4_XS block: f16 d, per sub-block of 32 a 6-bit scale ls (the sub-block's
    step d * (ls - 32); low nibbles in scales_l[s / 2], top bits 2s, 2s+1 of scales_h),
    then each sub-block's nibbles as IQ4_NL's."""
    subs = [blk[32 * s:32 * s + 32] for s in range(8)]
    steps = [max(x, key=abs) / -127 for x in subs]
    d = struct.unpack("<e", f16(max(abs(st) for st in steps) / 31 or 1.0))[0] or 1.0
    ls = [min(63, max(0, round(st / d) + 32)) for st in steps]
    scales_h = sum((l >> 4) << (2 * s) for s, l in enumerate(ls))
    scales_l = bytes((ls[2 * i] & 15) | (ls[2 * i + 1] & 15) << 4 for i in range(4))
    qs = b"".join(iq4_nibbles(x, (d * (l - 32)) or 1.0) for x, l in zip(subs, ls))
    return f16(d) + struct.pack("<H", scales_h) + scales_l + qs


def q2_k_block(blk):
    """One Q2_K block: per sub-block of 16 a step and an offset, 4-bit multiples of the
    block's f16 d and dmin (scales[s]: scale low nibble, min high); element 128h + 32g + l
    in bits 2g, 2g+1 of qs[32h + l]; then d, dmin."""
    subs = [blk[16 * s:16 * s + 16] for s in range(16)]
    los = [min(min(x), 0.0) for x in subs]
    steps = [(max(x) - lo) / 3 for x, lo in zip(subs, los)]
    d = struct.unpack("<e", f16(max(steps) / 15 or 1.0))[0]
    dmin = struct.unpack("<e", f16(max(-lo for lo in los) / 15 or 1.0))[0]
    sc = [min(15, max(0, round(st / d))) for st in steps]
    m = [min(15, max(0, round(-lo / dmin))) for lo in los]
    qs = [0] * 64
    for e, v in enumerate(blk):
        s_ = e // 16
        q = min(3, max(0, round((v + dmin * m[s_]) / (d * sc[s_] or 1.0))))
        qs[32 * (e // 128) + e % 32] |= q << (2 * ((e % 128) // 32))
    return bytes(sc[s_] | m[s_] << 4 for s_ in range(16)) + bytes(qs) + f16(d) + f16(dmin)


def q3_k_block(blk):
    """One Q3_K block: per sub-block of 16 a signed 6-bit multiple (sc - 32) of the block's
    f16 d, values q in -4..3 stored as u = q + 4: the low 2 bits as Q2_K's (qs), bit 2 in
    bit 4h + g of hmask[l]; the scales' low nibbles in scales[s % 8] (s / 8: high
    nibble), their top 2 bits at 2 (s / 4) of scales[8 + s % 4]; then d."""
    subs = [blk[16 * s:16 * s + 16] for s in range(16)]
    amax = [max(abs(v) for v in x) / 4 for x in subs]
    d = struct.unpack("<e", f16(max(amax) / 31 or 1.0))[0]
    sc = [min(31, max(-32, round(a / d))) for a in amax]
    hmask, qs, scales = [0] * 32, [0] * 64, [0] * 12
    for e, v in enumerate(blk):
        s_ = e // 16
        q = min(3, max(-4, round(v / (d * sc[s_] or 1.0))))
        u, h, g, l_ = q + 4, e // 128, (e % 128) // 32, e % 32
        qs[32 * h + l_] |= (u & 3) << (2 * g)
        hmask[l_] |= (u >> 2) << (4 * h + g)
    for s_ in range(16):
        x = sc[s_] + 32
        scales[s_ % 8] |= (x & 15) << (4 * (s_ // 8))
        scales[8 + s_ % 4] |= (x >> 4) << (2 * (s_ // 4))
    return bytes(hmask) + bytes(qs) + bytes(scales) + f16(d)


def k_block(blk, five):
    """One Q4_K / Q5_K block: per sub-block of 32 a step and an offset, 6-bit multiples of
    the block's f16 d and dmin; sub-block s's scale and min packed as docs/NUMERICS.md says."""
    qmax = 31 if five else 15
    subs = [blk[32 * s:32 * s + 32] for s in range(8)]
    los = [min(min(x), 0.0) for x in subs]
    steps = [(max(x) - lo) / qmax for x, lo in zip(subs, los)]
    d = struct.unpack("<e", f16(max(steps) / 63 or 1.0))[0]
    dmin = struct.unpack("<e", f16(max(-lo for lo in los) / 63 or 1.0))[0]
    sc = [min(63, max(0, round(st / d))) for st in steps]
    m = [min(63, max(0, round(-lo / dmin))) for lo in los]
    scales = [0] * 12
    for s_ in range(8):
        if s_ < 4:
            scales[s_] |= sc[s_]
            scales[s_ + 4] |= m[s_]
        else:
            scales[s_ + 4] |= (sc[s_] & 15) | (m[s_] & 15) << 4
            scales[s_ - 4] |= (sc[s_] >> 4) << 6
            scales[s_] |= (m[s_] >> 4) << 6
    qs, qh = [0] * 128, [0] * 32
    for s_ in range(8):
        step = d * sc[s_] or 1.0
        for l_, v in enumerate(subs[s_]):
            q = min(qmax, max(0, round((v + dmin * m[s_]) / step)))
            qs[32 * (s_ // 2) + l_] |= (q & 15) << (4 * (s_ % 2))
            qh[l_] |= ((q >> 4) & 1) << s_
    return f16(d) + f16(dmin) + bytes(scales) + (bytes(qh) if five else b"") + bytes(qs)


def gguf(kvs, tensors, align=32):
    """tensors: (name, ne, ggml type, data bytes)."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    infos, off, blobs = b"", 0, []
    for name, ne, t, data in tensors:
        infos += s(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", x) for x in ne)
        infos += struct.pack("<IQ", t, off)
        blobs.append((off, data))
        off = (off + len(data) + align - 1) // align * align
    b = head + infos
    b += b"\0" * ((-len(b)) % align)
    body = bytearray()
    for o, data in blobs:
        body += b"\0" * (o - len(body))
        body += data
    return b + bytes(body)


def meta(d, heads, kv_heads, ff, layers, arch="llama", extra=(), context=64):
    kvs = [kv("general.architecture", STR, s(arch)),
           kv("llama.block_count", U32, struct.pack("<I", layers)),
           kv("llama.embedding_length", U32, struct.pack("<I", d)),
           kv("llama.attention.head_count", U32, struct.pack("<I", heads)),
           kv("llama.attention.head_count_kv", U32, struct.pack("<I", kv_heads)),
           kv("llama.feed_forward_length", U32, struct.pack("<I", ff)),
           kv("llama.context_length", U32, struct.pack("<I", context)),
           kv("llama.attention.layer_norm_rms_epsilon", F32V, struct.pack("<f", 1e-5)),
           kv("llama.rope.freq_base", F32V, struct.pack("<f", 10000.0))]
    return kvs + list(extra)


def model(d=8, heads=2, kv_heads=1, ff=8, vocab=8, layers=2, tied=True, types=None, seed=1,
          edit=None, arch="llama", extra_meta=(), drop=(), add=(), context=64):
    """A Llama model; types: tensor kind -> ggml type (matrices), norms are F32."""
    ty = {"emb": F32, "attn": F32, "ffn": F32, "out": F32}
    ty.update(types or {})
    ty.setdefault("down", ty["ffn"])
    hd = d // heads
    rng = Rng(seed)

    def tensor(name, ne, t, scale=0.5):
        n = 1
        for x in ne:
            n *= x
        vals = [rng.next() * scale for _ in range(n)]
        if name.endswith("norm.weight"):
            vals = [1.0 + 0.25 * v for v in vals]
        if edit:
            vals = edit(name, vals)
        return (name, ne, t, encode(vals, t))

    ts = [tensor("token_embd.weight", [d, vocab], ty["emb"])]
    for i in range(layers):
        p = "blk.%d." % i
        ts += [tensor(p + "attn_norm.weight", [d], F32),
               tensor(p + "attn_q.weight", [d, heads * hd], ty["attn"]),
               tensor(p + "attn_k.weight", [d, kv_heads * hd], ty["attn"]),
               tensor(p + "attn_v.weight", [d, kv_heads * hd], ty["attn"]),
               tensor(p + "attn_output.weight", [heads * hd, d], ty["attn"]),
               tensor(p + "ffn_norm.weight", [d], F32),
               tensor(p + "ffn_gate.weight", [d, ff], ty["ffn"]),
               tensor(p + "ffn_up.weight", [d, ff], ty["ffn"]),
               tensor(p + "ffn_down.weight", [ff, d], ty["down"])]
    ts.append(tensor("output_norm.weight", [d], F32))
    if not tied:
        ts.append(tensor("output.weight", [d, vocab], ty["out"]))
    ts = [t for t in ts if t[0] not in drop] + [tensor(n, ne, t) for n, ne, t in add]
    return gguf(meta(d, heads, kv_heads, ff, layers, arch, extra_meta, context), ts)


def edge_values(name, vals):
    """Weights at the edges of f32: NaN, infinities, subnormals, -0, huge values."""
    if name == "blk.0.attn_q.weight":
        vals[3] = float("nan")
    if name == "blk.1.ffn_up.weight":
        vals[5], vals[6] = float("inf"), float("-inf")
    if name == "token_embd.weight":
        vals[0], vals[1], vals[2] = 1e-42, -0.0, 3e38
    if name == "blk.0.ffn_down.weight":
        vals[0] = -1e-40
    return vals


def main():
    os.makedirs(OUT, exist_ok=True)
    Q = dict(d=32, heads=2, kv_heads=1, ff=32, vocab=8, layers=1)
    K = dict(Q, ff=256)
    seeds = {
        "ok_f32_tied.gguf": model(),
        "ok_f16_untied_mha.gguf": model(kv_heads=2, tied=False, types={
            "emb": F16, "attn": F16, "ffn": F16, "out": F16}, seed=2),
        "ok_bf16.gguf": model(types={"emb": BF16, "attn": BF16, "ffn": BF16}, seed=3),
        "ok_q8_0.gguf": model(types={"emb": Q8_0, "attn": Q8_0, "ffn": Q8_0}, seed=4, **Q),
        "ok_q4_0_q4_1_f16.gguf": model(types={"emb": F16, "attn": Q4_0, "ffn": Q4_1}, seed=5,
                                       tied=False, **Q),
        "ok_f32_edge_values.gguf": model(edit=edge_values, seed=6),
        # a context of one token, shorter than the target's three (found by the
        # structure-aware mutation, session 48: the target asked for three)
        "ok_context_1.gguf": model(context=1, seed=7),
        "bad_arch_gpt2.gguf": model(arch="gpt2"),
        "bad_missing_tensor.gguf": model(drop=("blk.1.ffn_up.weight",)),
        "bad_extra_tensor.gguf": model(add=(("blk.0.attn_q.bias", [8], F32),)),
        "bad_wrong_shape.gguf": model(drop=("blk.0.attn_k.weight",),
                                      add=(("blk.0.attn_k.weight", [8, 8], F32),)),
        # the types of llama.cpp's Q4_K_M / Q5_K_M files and their fallbacks (session 49)
        "ok_q5_0_q5_1.gguf": model(types={"attn": Q5_0, "ffn": Q5_1}, seed=8, tied=False, **Q),
        # the K types' rows are whole 256-element blocks: ff = 256 (each file stays under the
        # target's 16 KiB)
        "ok_q4_k_down.gguf": model(types={"emb": Q4_0, "attn": Q4_0, "ffn": Q4_0, "down": Q4_K},
                                   seed=9, **K),
        "ok_q5_k_down.gguf": model(types={"emb": Q5_1, "attn": Q5_0, "ffn": Q4_0, "down": Q5_K},
                                   seed=10, **K),
        # Q3_K_M / Q2_K files' types (session 50), kept in the packed G16 form
        "ok_q3_k_down.gguf": model(types={"emb": Q4_0, "attn": Q4_0, "ffn": Q4_0, "down": Q3_K},
                                   seed=11, **K),
        "ok_q2_k_down.gguf": model(types={"emb": Q4_0, "attn": Q4_0, "ffn": Q4_0, "down": Q2_K},
                                   seed=12, **K),
        # llama.cpp's IQ4_XS files, IQ4_NL where rows are not whole 256-element blocks
        # (session 51)
        "ok_iq4_xs_down.gguf": model(types={"emb": Q4_0, "attn": IQ4_NL, "ffn": IQ4_NL,
                                            "down": IQ4_XS}, seed=13, **K),
        "bad_iq3_s.gguf": model(types={"emb": Q4_0, "attn": Q4_0, "ffn": Q4_0, "down": IQ3_S},
                                **K),
        "bad_heads_not_dividing.gguf": model(d=8, heads=3, kv_heads=3),
        "bad_head_dim_odd.gguf": model(d=9, heads=3, kv_heads=3, ff=9),
        "bad_rope_scaling.gguf": model(extra_meta=(kv("llama.rope.scaling.type", STR,
                                                      s("linear")),)),
        "bad_vocab_size.gguf": model(extra_meta=(kv("llama.vocab_size", U32,
                                                    struct.pack("<I", 9)),)),
        "bad_value_length.gguf": model(extra_meta=(kv("llama.attention.value_length", U32,
                                                      struct.pack("<I", 2)),)),
    }
    for name, data in sorted(seeds.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
