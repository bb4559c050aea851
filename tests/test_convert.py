#!/usr/bin/env python3
"""tools/convert_nanogpt.py end to end: random nanoGPT-style state dicts -> converter -> hmx.

Usage: test_convert.py HMX CONVERTER WORKDIR   (ctest: tests/t_convert.cmake)

Two small models (2 layers, d 64, 4 heads of 16, d_ff 96, vocab 256, weights ~N(0, 0.3)):
  fused:    c_attn (4 KV heads), c_fc (gate, up), dense c_proj, zero biases, lm_head == wte
  separate: q/k/v_proj (2 KV heads), Hadamard alpha/beta, mlp.w1/w2/w3, untied lm_head,
            '_orig_mod.' prefix, n_head from the file's __metadata__
The logits of `hmx generate --logits-out` are compared with an independent float64 forward
pass of the ORIGINAL state dict, written here from the math of docs/MODEL.md: relative error
(max abs error / max |logit|, per row) below 1e-4 for f32; an f16/bf16 file is within 2e-2 /
1.5e-1 of that and within 1e-4 of the forward pass of its rounded weights (rounded here by
float64 arithmetic, ties to even; a quarter of the separate model's entries are exact ties).
Negative controls (the comparison can fail): the reference with interleaved RoPE, and the
file converted with --rope-style interleaved, must both miss the 1e-4 bound. (A common
shift of all positions is no control: RoPE attention depends on position differences only.)
The converter must reject a non-zero Linear bias, learned positions (wpe) and a missing tensor.
Exit 0 pass, 1 fail, 77 skip (numpy missing).
"""
import json
import os
import struct
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    print("test_convert: SKIP: numpy is not installed for this Python")
    sys.exit(77)

L, d, H, D, FF, V = 2, 64, 4, 16, 96, 256
BASE, EPS = 10000.0, 1e-5
TOKENS = [3, 141, 59, 26, 5, 35, 89, 79, 32, 38, 46, 26, 255, 0]
# bf16 keeps 8 significant bits: with these deliberately sharp weights (peaked attention,
# large SwiGLU activations) its logits move 2-7% from the f32 model's (f16: 0.2-0.5%); the
# exact check of a low-precision file is against the reference of its rounded weights.
F32_BOUND, F16_BOUND, BF16_BOUND = 1e-4, 2e-2, 1.5e-1

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


# ------------------------------------------------------------------ files

def write_st(path, sd, meta=None, prefix=""):
    """A float32 safetensors file, written here (independent of the converter's writer)."""
    header, off, blobs = {}, 0, []
    if meta:
        header["__metadata__"] = meta
    for name, a in sd.items():
        raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[prefix + name] = {"dtype": "F32", "shape": list(a.shape),
                                 "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_st(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    types = {"F32": "<f4", "I32": "<i4", "BF16": "<u2", "F16": "<f2"}
    out = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + a:8 + n + b], types[t["dtype"]]).reshape(t["shape"])
    return out, meta


# ------------------------------------------------------------------ models

def make_state_dict(seed, variant):
    rng = np.random.default_rng(seed)
    w = lambda *shape: rng.normal(0.0, 0.3, shape)
    G = 4 if variant == "fused" else 2
    sd = {"transformer.wte.weight": w(V, d)}
    for n in range(L):
        p = f"transformer.h.{n}."
        sd[p + "ln_1.weight"] = 1 + 0.1 * rng.normal(size=d)
        sd[p + "ln_2.weight"] = 1 + 0.1 * rng.normal(size=d)
        if variant == "fused":
            sd[p + "ln_1.bias"] = np.zeros(d)  # zero biases are accepted
            sd[p + "attn.c_attn.weight"] = w((H + 2 * G) * D, d)
            sd[p + "attn.c_attn.bias"] = np.zeros((H + 2 * G) * D)
            sd[p + "attn.c_proj.weight"] = w(d, H * D)
            sd[p + "mlp.c_fc.weight"] = w(2 * FF, d)
            sd[p + "mlp.c_proj.weight"] = w(d, FF)
        else:
            sd[p + "attn.q_proj.weight"] = w(H * D, d)
            sd[p + "attn.k_proj.weight"] = w(G * D, d)
            sd[p + "attn.v_proj.weight"] = w(G * D, d)
            sd[p + "attn.alpha"] = 1 + 0.2 * rng.normal(size=d)
            sd[p + "attn.beta"] = 0.1 * rng.normal(size=d)
            sd[p + "mlp.w1.weight"] = w(FF, d)
            sd[p + "mlp.w3.weight"] = w(FF, d)
            sd[p + "mlp.w2.weight"] = w(d, FF)
    sd["transformer.ln_f.weight"] = 1 + 0.1 * rng.normal(size=d)
    sd["lm_head.weight"] = sd["transformer.wte.weight"].copy() if variant == "fused" else w(V, d)
    if variant == "separate":
        # a quarter of the matrix entries exactly halfway between two bf16 values, so that
        # the bf16 check sees ties (to even) and not only ordinary rounding
        for k, v in sd.items():
            if v.ndim == 2:
                m, e = np.frexp(v)
                sd[k] = np.where(rng.random(v.shape) < 0.25,
                                 np.ldexp((np.floor(m * 256) + 0.5) / 256, e), v)
    # the reference computes with the f32 values the files hold
    return {k: v.astype(np.float32) for k, v in sd.items()}, G


def rmsnorm(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def rope(x, pos, style):
    """x [T, heads, D]; pair i is channels (i, i + D/2) (half) or (2i, 2i+1) (interleaved),
    rotated by the angle pos * BASE^(-2i/D)."""
    half = x.shape[-1] // 2
    ang = pos[:, None] * BASE ** (-2.0 * np.arange(half) / x.shape[-1])  # [T, D/2]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    i1, i2 = (np.arange(half), np.arange(half) + half) if style == "half" else \
        (np.arange(0, 2 * half, 2), np.arange(1, 2 * half, 2))
    y = x.copy()
    y[..., i1] = x[..., i1] * c - x[..., i2] * s
    y[..., i2] = x[..., i2] * c + x[..., i1] * s
    return y


def round_bf16(x):
    """Round to the nearest bfloat16 (8 significant bits, ties to even), in float64 arithmetic
    (np.round rounds halves to even); independent of the converter's integer version."""
    m, e = np.frexp(x.astype(np.float64))
    return np.ldexp(np.round(m * 256.0) / 256.0, e).astype(np.float32)


def sylvester(n):
    m = np.ones((1, 1))
    while m.shape[0] < n:
        m = np.block([[m, m], [m, -m]])
    return m


def reference(sd, G, tokens, rope_style="half", fc_order="gate,up"):
    """float64 forward pass of the nanoGPT state dict; logits [T, V]."""
    sd = {k: v.astype(np.float64) for k, v in sd.items()}
    T = len(tokens)
    pos = np.arange(T, dtype=np.float64)
    x = sd["transformer.wte.weight"][tokens]
    mask = np.tril(np.ones((T, T), dtype=bool))
    for n in range(L):
        p = f"transformer.h.{n}."
        h = rmsnorm(x, sd[p + "ln_1.weight"])
        if p + "attn.c_attn.weight" in sd:
            wq, wk, wv = np.split(sd[p + "attn.c_attn.weight"], [H * D, (H + G) * D])
        else:
            wq, wk, wv = (sd[p + f"attn.{c}_proj.weight"] for c in "qkv")
        q = rope((h @ wq.T).reshape(T, H, D), pos, rope_style)
        k = rope((h @ wk.T).reshape(T, G, D), pos, rope_style)
        v = (h @ wv.T).reshape(T, G, D)
        a = np.zeros((T, H, D))
        for i in range(H):
            g = i // (H // G)
            s = q[:, i, :] @ k[:, g, :].T / np.sqrt(D)
            s = np.where(mask, s, -np.inf)
            e = np.exp(s - s.max(axis=1, keepdims=True))
            a[:, i, :] = (e / e.sum(axis=1, keepdims=True)) @ v[:, g, :]
        a = a.reshape(T, H * D)
        if p + "attn.c_proj.weight" in sd:
            o = a @ sd[p + "attn.c_proj.weight"].T
        else:
            o = a @ sylvester(d) / np.sqrt(d) * sd[p + "attn.alpha"] + sd[p + "attn.beta"]
        x = x + o
        h = rmsnorm(x, sd[p + "ln_2.weight"])
        if p + "mlp.c_fc.weight" in sd:
            fc = sd[p + "mlp.c_fc.weight"]
            gate, up = (fc[:FF], fc[FF:]) if fc_order == "gate,up" else (fc[FF:], fc[:FF])
            down = sd[p + "mlp.c_proj.weight"]
        else:
            gate, up, down = (sd[p + f"mlp.{c}.weight"] for c in ("w1", "w3", "w2"))
        g1 = h @ gate.T
        x = x + (g1 / (1 + np.exp(-g1)) * (h @ up.T)) @ down.T
    return rmsnorm(x, sd["transformer.ln_f.weight"]) @ sd["lm_head.weight"].T


def rel_err(got, ref):
    return float(np.max(np.max(np.abs(got - ref), axis=1) / np.max(np.abs(ref), axis=1)))


# ------------------------------------------------------------------ driving the tools

def convert(src, out, *opts):
    r = subprocess.run([sys.executable, CONVERTER, src, "--out", out, *opts],
                       capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


def hmx_logits(weights, name):
    out = os.path.join(WORK, name + ".logits.safetensors")
    r = subprocess.run([HMX, "generate", "--weights", weights, "--tokens",
                        ",".join(map(str, TOKENS)), "-n", "1", "--logits-out", out],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        check(False, f"{name}: hmx generate exit {r.returncode}: {r.stderr.strip()}")
        return None
    t, _ = read_st(out)
    return t["logits"].astype(np.float64)


def run_case(name, sd, G, bound, opts, meta=None, prefix="", ref_kw=None, control=False,
             rounded=None):
    """Convert sd, run hmx, compare with the reference; rounded: the reference of the
    rounded weights (bf16/f16) must agree to F32_BOUND too. Returns the output metadata."""
    src = os.path.join(WORK, name + ".in.safetensors")
    dst = os.path.join(WORK, name + ".hmx.safetensors")
    write_st(src, sd, meta, prefix)
    rc, msg = convert(src, dst, *opts)
    check(rc == 0, f"{name}: convert exit {rc}: {msg.strip()}")
    if rc:
        return None
    got = hmx_logits(dst, name)
    if got is None:
        return None
    ref_kw = ref_kw or {}
    err = rel_err(got, reference(sd, G, TOKENS, **ref_kw))
    check(err < bound, f"{name}: relative error {err:.3g} < {bound:g}")
    if rounded:
        rsd = {k: rounded(v) for k, v in sd.items()}
        err = rel_err(got, reference(rsd, G, TOKENS, **ref_kw))
        check(err < F32_BOUND, f"{name}: vs the reference of the rounded weights: relative "
                               f"error {err:.3g} < {F32_BOUND:g}")
    if control:
        bad = rel_err(got, reference(sd, G, TOKENS, rope_style="interleaved", **ref_kw))
        check(bad > F32_BOUND, f"{name}: negative control (reference with interleaved RoPE) "
                               f"error {bad:.3g} > {F32_BOUND:g}")
    return read_st(dst)[1]


def expect_reject(name, sd, words, opts=("--n-head", str(H))):
    src = os.path.join(WORK, name + ".in.safetensors")
    write_st(src, sd)
    rc, msg = convert(src, os.path.join(WORK, name + ".hmx.safetensors"), *opts)
    msg = msg.strip()
    ok = rc == 1 and msg.startswith("convert_nanogpt: ") and all(w in msg for w in words)
    check(ok, f"{name}: rejected with exit {rc}: {msg}")


def main():
    os.makedirs(WORK, exist_ok=True)
    fused, g_fused = make_state_dict(1, "fused")
    sep, g_sep = make_state_dict(2, "separate")

    meta = run_case("fused", fused, g_fused, F32_BOUND, ["--n-head", str(H)], control=True)
    if meta:
        check(meta.get("tied") == "1" and meta.get("outproj") == "dense"
              and meta.get("n_kv_head") == "4" and meta.get("norm_eps") == "9.99999975e-06",
              f"fused: metadata {meta}")
    run_case("fused_upgate", fused, g_fused, F32_BOUND,
             ["--n-head", str(H), "--fc-order", "up,gate"], ref_kw={"fc_order": "up,gate"})
    run_case("fused_f16", fused, g_fused, F16_BOUND, ["--n-head", str(H), "--dtype", "f16"],
             rounded=lambda v: v.astype(np.float16).astype(np.float32))
    # end to end control: the file says interleaved, the weights were trained with half
    src, dst = os.path.join(WORK, "fused.in.safetensors"), os.path.join(WORK, "inter.safetensors")
    if convert(src, dst, "--n-head", str(H), "--rope-style", "interleaved")[0] == 0:
        got = hmx_logits(dst, "inter")
        bad = rel_err(got, reference(fused, g_fused, TOKENS)) if got is not None else 0.0
        check(bad > F32_BOUND, f"fused --rope-style interleaved: negative control error "
                               f"{bad:.3g} > {F32_BOUND:g}")

    meta = run_case("separate", sep, g_sep, F32_BOUND, [], meta={"n_head": str(H)},
                    prefix="_orig_mod.", control=True)
    if meta:
        check(meta.get("tied") == "0" and meta.get("outproj") == "hadamard"
              and meta.get("n_kv_head") == "2" and meta.get("head_dim") == "16"
              and meta.get("d_ff") == str(FF), f"separate: metadata {meta}")
    run_case("separate_bf16", sep, g_sep, BF16_BOUND, ["--n-head", str(H), "--dtype", "bf16"],
             rounded=round_bf16)

    bad = dict(fused)
    bad["transformer.h.1.attn.c_attn.bias"] = np.full((H + 2 * g_fused) * D, 0.0, np.float32)
    bad["transformer.h.1.attn.c_attn.bias"][7] = 0.5
    expect_reject("reject_bias", bad, ["transformer.h.1.attn.c_attn.bias", "non-zero"])
    bad = dict(fused)
    bad["transformer.wpe.weight"] = np.zeros((1024, d), np.float32)
    expect_reject("reject_wpe", bad, ["transformer.wpe.weight", "position"])
    bad = {k: v for k, v in sep.items() if k != "transformer.ln_f.weight"}
    expect_reject("reject_missing", bad, ["missing tensor transformer.ln_f.weight"])

    if failures:
        print(f"test_convert: {len(failures)} check(s) failed")
        return 1
    print("test_convert: all checks passed")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print("usage: test_convert.py HMX CONVERTER WORKDIR", file=sys.stderr)
        sys.exit(2)
    HMX, CONVERTER, WORK = sys.argv[1:4]
    sys.exit(main())
