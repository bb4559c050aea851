#!/usr/bin/env python3
"""GGUF files written by the gguf pip package (llama.cpp's own Python writer) through hadamix.

Usage: test_gguf.py GGUF_READER HMX WORKDIR   (ctest gguf_pip: tests/t_gguf.cmake)

1. Dequantization, bit for bit: random blocks (every byte random, so scales include
   subnormals, infinities and NaNs) of F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K,
   Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS, written
   with the expected f32 values from gguf.quants.dequantize (an independent implementation)
   as NAME.expected; `gguf_reader --compare FILE` compares the bits of every element.
2. A tiny Llama GGUF (6 layers, d 64, 4 heads of 16, 2 KV heads, d_ff 256, vocab 256) made
   the way llama.cpp's converter makes one: Hugging Face layout weights, Q and K rows
   permuted from rotate_half pairs (i, i + D/2) to adjacent pairs, tensors quantized by the
   gguf package (Q8_0 embedding, q Q4_1 / Q5_0 / IQ4_NL by layer and k Q4_1 / Q5_1 /
   IQ4_NL by layer (Q_TYPES, K_TYPES), Q4_0 v, BF16 attn_output, F16 gate, down Q6_K /
   Q4_K / Q5_K / Q3_K / Q2_K / IQ4_XS by layer (plain quantizers in gguf_quantizers.py for
   the K and IQ4 types: the package has none for them),
   F32 norms, Q8_0 untied output). `hmx generate --model` logits vs a float64 numpy forward
   pass of Hugging Face's Llama on the dequantized, un-permuted weights with rotate_half
   RoPE: relative error below 1e-4. Negative control: the same forward pass on the
   permuted weights (what a reader that skipped the interleaved RoPE would compute)
   misses the bound.
3. Rejections: a truncated model file and a file with an extra tensor fail with a message.
4. Hugging Face checkpoints of the same tiny Llama (config.json + safetensors written here):
   f32 in one file and bf16 in two shards with model.safetensors.index.json, against the
   float64 forward pass (of the bf16-rounded weights for bf16), bound 1e-4; a bias tensor and
   rope_scaling are rejected.
Exit 0 pass, 1 fail, 77 skip (numpy or gguf missing).
"""
import json
import os
import struct
import subprocess
import sys

try:
    import numpy as np
    import gguf
    from gguf.quants import quantize, dequantize
    from gguf_quantizers import (quantize_q6_k, quantize_k, quantize_q2_k, quantize_q3_k,
                                 quantize_iq4_nl, quantize_iq4_xs)
except ImportError as e:
    print(f"test_gguf: SKIP: {e} (pip install numpy gguf)")
    sys.exit(77)

READER, HMX, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
Q = gguf.GGMLQuantizationType
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def write(path, tensors, meta=None):
    """tensors: list of (name, array, raw_dtype or None); meta(writer) adds metadata."""
    w = gguf.GGUFWriter(path, "llama")
    if meta:
        meta(w)
    for name, a, raw in tensors:
        if raw is None:
            w.add_tensor(name, a)
        else:
            w.add_tensor(name, a, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# ------------------------------------------------------------------ 1. dequantization

def dequant_case():
    rng = np.random.default_rng(9)
    tensors = []
    for qt, rows, cols in ((Q.F32, 3, 64), (Q.F16, 3, 64), (Q.BF16, 3, 64), (Q.Q8_0, 8, 256),
                           (Q.Q4_0, 8, 256), (Q.Q4_1, 8, 256), (Q.Q6_K, 8, 512),
                           (Q.Q4_K, 8, 512), (Q.Q5_K, 8, 512), (Q.Q5_0, 8, 256),
                           (Q.Q5_1, 8, 256), (Q.Q2_K, 8, 512), (Q.Q3_K, 8, 512),
                           (Q.IQ4_NL, 8, 256), (Q.IQ4_XS, 8, 512)):
        block, tsize = gguf.GGML_QUANT_SIZES[qt]
        raw = rng.integers(0, 256, size=(rows, cols // block * tsize), dtype=np.uint8)
        if qt == Q.F16:
            # a few sNaN and qNaN halves, and every f16 exponent
            raw.view(np.uint16)[0, :4] = [0x7C01, 0xFE00, 0x8001, 0x7BFF]
        with np.errstate(invalid="ignore", over="ignore"):  # random scales: inf * 0
            want = dequantize(raw, qt).astype(np.float32).reshape(rows, cols)
        name = qt.name.lower()
        tensors.append((name, raw, qt))
        tensors.append((name + ".expected", want, None))
    path = os.path.join(WORK, "dequant.gguf")
    write(path, tensors)
    r = subprocess.run([READER, "--compare", path], capture_output=True, text=True, timeout=120)
    print(r.stdout + r.stderr, end="")
    check(r.returncode == 0, "dequantization bit-identical to gguf.quants.dequantize")


# ------------------------------------------------------------------ 2. a tiny Llama

def quantize_any(a, qt):
    """The gguf package's quantizer, or ours for the K types it has none for."""
    if qt == Q.Q6_K:
        return quantize_q6_k(a)
    if qt in (Q.Q4_K, Q.Q5_K):
        return quantize_k(a, qt == Q.Q5_K)
    if qt == Q.Q2_K:
        return quantize_q2_k(a)
    if qt == Q.Q3_K:
        return quantize_q3_k(a)
    if qt == Q.IQ4_NL:
        return quantize_iq4_nl(a)
    if qt == Q.IQ4_XS:
        return quantize_iq4_xs(a)
    return quantize(a, qt)


L, d, H, G, D, FF, V = 6, 64, 4, 2, 16, 256, 256
# the one matrix whose rows (d_ff) are whole K blocks
DOWN_TYPES = (Q.Q6_K, Q.Q4_K, Q.Q5_K, Q.Q3_K, Q.Q2_K, Q.IQ4_XS)
Q_TYPES = (Q.Q4_1, Q.Q5_0, Q.Q4_1, Q.Q5_0, Q.Q4_1, Q.IQ4_NL)
K_TYPES = (Q.Q4_1, Q.Q4_1, Q.Q5_1, Q.Q4_1, Q.Q5_1, Q.IQ4_NL)
BASE, EPS, CTX = 50000.0, 1e-5, 64
TOKENS = [3, 141, 59, 26, 5, 35, 89, 79, 32, 38, 46, 26, 255, 0]


def permute(w, heads):
    """Hugging Face's rotate_half rows -> adjacent pairs (the layout llama.cpp stores):
    within each head, row j of the first half and row j of the second half become rows
    2j and 2j+1."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2) \
        .reshape(w.shape)


def unpermute(w, heads):
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2) \
        .reshape(w.shape)


def rmsnorm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def rope_half(x, pos):
    """Hugging Face Llama: x * cos + rotate_half(x) * sin, x [T, heads, D]."""
    half = D // 2
    ang = pos[:, None] * BASE ** (-2.0 * np.arange(half) / D)
    c = np.concatenate([np.cos(ang)] * 2, axis=-1)[:, None, :]
    s = np.concatenate([np.sin(ang)] * 2, axis=-1)[:, None, :]
    rot = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * c + rot * s


def hf_forward(w, tokens):
    """float64 forward pass of Hugging Face's LlamaForCausalLM (no biases); logits [T, V]."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    T = len(tokens)
    pos = np.arange(T, dtype=np.float64)
    x = w["embed"][tokens]
    mask = np.tril(np.ones((T, T), dtype=bool))
    for n in range(L):
        p = f"{n}."
        h = rmsnorm(x, w[p + "in_norm"])
        q = rope_half((h @ w[p + "q"].T).reshape(T, H, D), pos)
        k = rope_half((h @ w[p + "k"].T).reshape(T, G, D), pos)
        v = (h @ w[p + "v"].T).reshape(T, G, D)
        a = np.zeros((T, H, D))
        for i in range(H):
            g = i // (H // G)
            s = q[:, i, :] @ k[:, g, :].T / np.sqrt(D)
            s = np.where(mask, s, -np.inf)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            a[:, i, :] = (e / e.sum(axis=1, keepdims=True)) @ v[:, g, :]
        x = x + a.reshape(T, H * D) @ w[p + "o"].T
        h = rmsnorm(x, w[p + "post_norm"])
        g1 = h @ w[p + "gate"].T
        x = x + (g1 / (1 + np.exp(-g1)) * (h @ w[p + "up"].T)) @ w[p + "down"].T
    return rmsnorm(x, w["norm"]) @ w["lm_head"].T


def read_st(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    t = header["logits"]
    a, b = t["data_offsets"]
    return np.frombuffer(data[8 + n + a:8 + n + b], "<f4").reshape(t["shape"])


def hmx_logits(path, name):
    out = os.path.join(WORK, name + ".logits.safetensors")
    r = subprocess.run([HMX, "generate", "--model", path, "--tokens", ",".join(map(str, TOKENS)),
                        "-n", "1", "--logits-out", out], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        check(False, f"{name}: hmx generate exit {r.returncode}: {r.stderr.strip()}")
        return None
    return read_st(out).astype(np.float64)


def rel_err(got, ref):
    return float(np.max(np.max(np.abs(got - ref), axis=1) / np.max(np.abs(ref), axis=1)))


def tiny_hf_weights():
    rng = np.random.default_rng(11)
    nrm = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    hf = {"embed": nrm(V, d), "norm": 1 + nrm(d) * 0.3, "lm_head": nrm(V, d)}
    for n in range(L):
        p = f"{n}."
        hf.update({p + "in_norm": 1 + nrm(d) * 0.3, p + "post_norm": 1 + nrm(d) * 0.3,
                   p + "q": nrm(H * D, d), p + "k": nrm(G * D, d), p + "v": nrm(G * D, d),
                   p + "o": nrm(d, H * D), p + "gate": nrm(FF, d), p + "up": nrm(FF, d),
                   p + "down": nrm(d, FF) * 0.3})
    return hf


def llama_case(hf):
    # (gguf name, HF name, type, permute heads)
    plan = [("token_embd.weight", "embed", Q.Q8_0, 0), ("output_norm.weight", "norm", Q.F32, 0),
            ("output.weight", "lm_head", Q.Q8_0, 0)]
    for n in range(L):
        p, b = f"{n}.", f"blk.{n}."
        plan += [(b + "attn_norm.weight", p + "in_norm", Q.F32, 0),
                 (b + "attn_q.weight", p + "q", Q_TYPES[n], H),
                 (b + "attn_k.weight", p + "k", K_TYPES[n], G),
                 (b + "attn_v.weight", p + "v", Q.Q4_0, 0),
                 (b + "attn_output.weight", p + "o", Q.BF16, 0),
                 (b + "ffn_norm.weight", p + "post_norm", Q.F32, 0),
                 (b + "ffn_gate.weight", p + "gate", Q.F16, 0),
                 (b + "ffn_up.weight", p + "up", Q.Q8_0, 0),
                 (b + "ffn_down.weight", p + "down", DOWN_TYPES[n], 0)]
    tensors, deq, deq_perm = [], {}, {}
    for gname, hname, qt, heads in plan:
        a = permute(hf[hname], heads) if heads else hf[hname]
        if qt == Q.F32:
            tensors.append((gname, a, None))
            back = a
        else:
            raw = quantize_any(a, qt)
            tensors.append((gname, raw, qt))
            back = dequantize(raw, qt).reshape(a.shape)
        deq_perm[hname] = back
        deq[hname] = unpermute(back, heads) if heads else back

    def meta(w):
        w.add_block_count(L)
        w.add_context_length(CTX)
        w.add_embedding_length(d)
        w.add_feed_forward_length(FF)
        w.add_head_count(H)
        w.add_head_count_kv(G)
        w.add_rope_freq_base(BASE)
        w.add_layer_norm_rms_eps(EPS)
        w.add_rope_dimension_count(D)
        w.add_vocab_size(V)

    def write_model(path, ts):
        write(path, ts, meta)

    path = os.path.join(WORK, "tiny_llama.gguf")
    write_model(path, tensors)
    got = hmx_logits(path, "tiny_llama")
    if got is None:
        return
    ref = hf_forward(deq, TOKENS)
    err = rel_err(got, ref)
    check(err < 1e-4, f"tiny Llama GGUF vs float64 Hugging Face forward pass: relative error "
          f"{err:.2e} (bound 1e-4)")
    bad = rel_err(got, hf_forward(deq_perm, TOKENS))
    check(bad > 1e-4, f"negative control (permuted weights with rotate_half RoPE): error "
          f"{bad:.2e} misses the bound")
    # F16/BF16 tensors are kept as they are: the same bits as storing their values as F32
    as_f32 = [(n, dequantize(a, qt).reshape(back.shape).astype(np.float32), None)
              if qt in (Q.F16, Q.BF16) else (n, a, qt)
              for (n, a, qt), back in zip(tensors, [deq_perm[h] for _, h, _, _ in plan])]
    path32 = os.path.join(WORK, "tiny_llama_f32.gguf")
    write_model(path32, as_f32)
    got32 = hmx_logits(path32, "tiny_llama_f32")
    check(got32 is not None and np.array_equal(got.view(np.uint64), got32.view(np.uint64)),
          "F16/BF16 kept as f16/bf16: logits bit-identical to the same values stored as F32")

    # 3. rejections
    with open(path, "rb") as f:
        data = f.read()
    cut = os.path.join(WORK, "cut.gguf")
    with open(cut, "wb") as f:
        f.write(data[:len(data) - 1000])
    r = subprocess.run([HMX, "generate", "--model", cut, "--tokens", "1", "-n", "1"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "truncated" in r.stderr, f"truncated model rejected: "
          f"{r.stderr.strip()[:160]}")
    extra = os.path.join(WORK, "extra.gguf")
    write_model(extra, tensors + [("blk.0.attn_q.bias", np.zeros(H * D, np.float32), None)])
    r = subprocess.run([HMX, "generate", "--model", extra, "--tokens", "1", "-n", "1"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "attn_q.bias" in r.stderr, f"unknown tensor rejected: "
          f"{r.stderr.strip()[:160]}")


# ------------------------------------------------------------------ 4. Hugging Face checkpoints

HF_NAMES = {"embed": "model.embed_tokens.weight", "norm": "model.norm.weight",
            "lm_head": "lm_head.weight"}
for _n in range(L):
    for _k, _v in (("in_norm", "input_layernorm"), ("post_norm", "post_attention_layernorm"),
                   ("q", "self_attn.q_proj"), ("k", "self_attn.k_proj"),
                   ("v", "self_attn.v_proj"), ("o", "self_attn.o_proj"),
                   ("gate", "mlp.gate_proj"), ("up", "mlp.up_proj"), ("down", "mlp.down_proj")):
        HF_NAMES[f"{_n}.{_k}"] = f"model.layers.{_n}.{_v}.weight"


def write_safetensors(path, tensors):
    """{name: (dtype name, uint8 bytes, shape)} -> a safetensors file, written here."""
    header, off, blobs = {}, 0, []
    for name, (dt, raw, shape) in tensors.items():
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def bf16_round(a):
    """f32 -> bf16 bits, round to nearest even (integer arithmetic), and back."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r, (r.astype(np.uint32) << 16).view(np.float32)


def hf_case(hf):
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": d,
              "intermediate_size": FF, "num_hidden_layers": L, "num_attention_heads": H,
              "num_key_value_heads": G, "rms_norm_eps": EPS, "rope_theta": BASE,
              "max_position_embeddings": CTX, "vocab_size": V, "tie_word_embeddings": False,
              "hidden_act": "silu", "rope_scaling": None, "attention_bias": False,
              "torch_dtype": "float32"}
    # f32, one file
    one = os.path.join(WORK, "hf_f32")
    os.makedirs(one, exist_ok=True)
    with open(os.path.join(one, "config.json"), "w") as f:
        json.dump(config, f)
    write_safetensors(os.path.join(one, "model.safetensors"),
                      {HF_NAMES[k]: ("F32", a.astype("<f4").tobytes(), a.shape)
                       for k, a in hf.items()})
    got = hmx_logits(one, "hf_f32")
    if got is not None:
        err = rel_err(got, hf_forward(hf, TOKENS))
        check(err < 1e-4, f"Hugging Face f32 checkpoint vs float64 forward pass: {err:.2e}")
    # bf16, two shards with an index
    two = os.path.join(WORK, "hf_bf16")
    os.makedirs(two, exist_ok=True)
    with open(os.path.join(two, "config.json"), "w") as f:
        json.dump(dict(config, torch_dtype="bfloat16"), f)
    rounded, shard = {}, [{}, {}]
    weight_map = {}
    for i, (k, a) in enumerate(sorted(hf.items())):
        bits, back = bf16_round(a)
        rounded[k] = back
        name, fn = HF_NAMES[k], f"model-0000{i % 2 + 1}-of-00002.safetensors"
        shard[i % 2][name] = ("BF16", bits.astype("<u2").tobytes(), a.shape)
        weight_map[name] = fn
    for i in range(2):
        write_safetensors(os.path.join(two, f"model-0000{i + 1}-of-00002.safetensors"), shard[i])
    with open(os.path.join(two, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    got = hmx_logits(two, "hf_bf16")
    if got is not None:
        err = rel_err(got, hf_forward(rounded, TOKENS))
        check(err < 1e-4, f"Hugging Face bf16 sharded checkpoint vs float64 forward pass of the "
              f"rounded weights: {err:.2e}")
    # rejections: a bias, scaled RoPE
    bad = os.path.join(WORK, "hf_bias")
    os.makedirs(bad, exist_ok=True)
    with open(os.path.join(bad, "config.json"), "w") as f:
        json.dump(config, f)
    t = {HF_NAMES[k]: ("F32", a.astype("<f4").tobytes(), a.shape) for k, a in hf.items()}
    t["model.layers.0.self_attn.q_proj.bias"] = ("F32", np.zeros(H * D, "<f4").tobytes(), (H * D,))
    write_safetensors(os.path.join(bad, "model.safetensors"), t)
    r = subprocess.run([HMX, "generate", "--model", bad, "--tokens", "1", "-n", "1"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "q_proj.bias" in r.stderr, f"bias rejected: {r.stderr.strip()[:120]}")
    with open(os.path.join(bad, "config.json"), "w") as f:
        json.dump(dict(config, rope_scaling={"rope_type": "llama3", "factor": 8.0}), f)
    r = subprocess.run([HMX, "generate", "--model", bad, "--tokens", "1", "-n", "1"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "rope_scaling" in r.stderr, f"rope_scaling rejected: "
          f"{r.stderr.strip()[:120]}")


def main():
    dequant_case()
    hf = tiny_hf_weights()
    llama_case(hf)
    hf_case(hf)
    print(f"test_gguf.py: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
