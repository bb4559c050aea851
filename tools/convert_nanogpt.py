#!/usr/bin/env python3
"""Convert a nanoGPT-style state dict (RoPE + SwiGLU variant) into a hadamix weights file.

The output is the safetensors layout of docs/MODEL.md ("hadamix-decoder-v1"): metadata with
the config, then the tensors in the canonical order, all in --dtype.

Input: a .safetensors state dict (read here with numpy; its __metadata__ may carry model_args
keys such as n_head as strings), or a PyTorch checkpoint .pt/.pth (needs torch; nanoGPT saves
{'model': state_dict, 'model_args': {...}}, a bare state dict works too). The torch path is
untested in hadamix's test suite (torch is not a dependency); tests/test_convert.py checks the
safetensors path against an independent float64 forward pass.

Accepted names ('_orig_mod.' of torch.compile and 'module.' of DDP are stripped), N = layer:
  transformer.wte.weight [V, d]                           token embedding (tied LM head)
  transformer.h.N.ln_1.weight, ln_2.weight [d]            RMSNorm weights (a zero bias is allowed)
  transformer.h.N.attn.c_attn.weight [(H+2G)*D, d]        fused q, k, v rows, in that order
    or attn.q_proj.weight [H*D, d], k_proj/v_proj.weight [G*D, d]
  transformer.h.N.attn.c_proj.weight [d, H*D]             dense output projection
    or attn.alpha, attn.beta [d] (or attn.hadamard.*)    Hadamard: (H_d a / sqrt(d)) * alpha + beta
  transformer.h.N.mlp.w1/w3.weight [ff, d], w2 [d, ff]    SwiGLU, silu(x W1^T) * (x W3^T) W2^T
    or mlp.c_fc.weight [2*ff, d] (gate rows, then up rows; --fc-order up,gate swaps)
       with mlp.c_proj.weight [d, ff]
  transformer.ln_f.weight [d]; lm_head.weight [V, d] (tied when absent or equal to wte)
Biases must be absent or zero; transformer.wpe (learned positions) is rejected. Norms are
taken as RMSNorm and RoPE as --rope-style: nothing in the weights tells them apart.

Usage:
  python3 tools/convert_nanogpt.py ckpt.pt --out model.safetensors [--dtype bf16]
  hmx generate --weights model.safetensors --prompt "Hello" -n 32
"""
import argparse
import json
import re
import struct
import sys

import numpy as np

FORMAT = "hadamix-decoder-v1"
ST_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2"}
# buffers that some nanoGPT variants keep in the state dict and that carry no weights
IGNORED = re.compile(r"(\.attn\.(bias|masked_bias)|inv_freq|freqs_cis|cos_cached|sin_cached)$")


class ConvertError(Exception):
    pass


def fail(msg):
    raise ConvertError(msg)


# ------------------------------------------------------------------ reading

def read_safetensors(path):
    """A safetensors file as ({name: float32 array}, metadata dict)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        fail(f"{path}: too short for a safetensors file")
    n = struct.unpack("<Q", data[:8])[0]
    if 8 + n > len(data):
        fail(f"{path}: header length {n} runs past the end of the file")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        fail(f"{path}: the header is not JSON ({e})")
    if not isinstance(header, dict):
        fail(f"{path}: the header is not a JSON object")
    meta = header.pop("__metadata__", None) or {}
    tensors = {}
    for name, info in header.items():
        try:
            dt, shape, (a, b) = info["dtype"], list(info["shape"]), info["data_offsets"]
        except (KeyError, TypeError, ValueError):
            fail(f"{path}: tensor {name}: needs dtype, shape and data_offsets [begin, end]")
        if dt not in ST_DTYPES:
            fail(f"{path}: tensor {name}: dtype {dt} is not supported (F64, F32, F16, BF16)")
        count = int(np.prod(shape, dtype=np.int64))
        if b - a != count * np.dtype(ST_DTYPES[dt]).itemsize or 8 + n + b > len(data):
            fail(f"{path}: tensor {name}: data_offsets [{a}, {b}] do not match its shape "
                 f"{shape} or the file size")
        arr = np.frombuffer(data, ST_DTYPES[dt], count, 8 + n + a).reshape(shape)
        if dt == "BF16":
            arr = (arr.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = arr.astype(np.float32)
    return tensors, meta


def read_torch(path):
    """A PyTorch checkpoint as ({name: float32 array}, model_args dict). Untested here."""
    try:
        import torch
    except ImportError:
        fail(f"{path}: reading a PyTorch checkpoint needs torch (pip install torch); or save "
             "the state dict as .safetensors")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # torch < 1.13 has no weights_only
        ckpt = torch.load(path, map_location="cpu")
    except Exception as e:
        fail(f"{path}: torch.load(weights_only=True) failed: {e}")
    if not isinstance(ckpt, dict):
        fail(f"{path}: expected a dict (a state dict or nanoGPT's {{'model': ...}})")
    sd = ckpt.get("model", ckpt)
    args = ckpt.get("model_args", {}) if "model" in ckpt else {}
    tensors = {k: v.detach().cpu().float().numpy() for k, v in sd.items()
               if isinstance(v, torch.Tensor)}
    return tensors, dict(args)


# ------------------------------------------------------------------ helpers

def exact_div(a, b, what):
    if b <= 0 or a % b:
        fail(f"{what}: {a} is not a multiple of {b}")
    return a // b


class StateDict:
    """The input tensors; take() checks shapes and marks names as used."""

    def __init__(self, tensors):
        self.t = {}
        for k, v in tensors.items():
            while k.startswith(("_orig_mod.", "module.")):
                k = k.split(".", 1)[1]
            self.t[k] = v

    def has(self, name):
        return name in self.t

    def take(self, name, shape=None):
        if name not in self.t:
            fail(f"missing tensor {name}")
        v = self.t.pop(name)
        if shape is not None and tuple(v.shape) != tuple(shape):
            fail(f"{name} has shape {list(v.shape)}, expected {list(shape)}")
        if not np.all(np.isfinite(v)):
            fail(f"{name} holds NaN or infinite values")
        return v

    def no_bias(self, weight_name, kind="Linear"):
        """A bias next to a weight must be absent or zero: hadamix has no such term."""
        name = weight_name[:-len("weight")] + "bias"
        if name in self.t and np.any(self.t.pop(name) != 0):
            fail(f"{name} is a non-zero {kind} bias; hadamix's model has no bias there "
                 "(train with bias=False)")

    def leftover(self):
        return sorted(k for k in self.t if not IGNORED.search(k))


def margs_int(margs, *keys):
    for k in keys:
        if margs.get(k) is not None:
            try:
                return int(margs[k])
            except (TypeError, ValueError):
                fail(f"model_args {k} = {margs[k]!r} is not an integer")
    return None


def to_bf16(x):
    """float32 -> bfloat16 bits (uint16), round to nearest even (x finite: take() checks)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def write_safetensors(path, tensors, meta, dtype):
    """tensors: list of (name, float32 array), written in order, all as dtype."""
    st_name = {"f32": "F32", "bf16": "BF16", "f16": "F16"}[dtype]
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if dtype == "bf16":
            bits = to_bf16(arr)
            if np.any((bits & 0x7FFF) == 0x7F80):
                fail(f"{name} has values that round beyond the bf16 range")
            raw = bits.astype("<u2").tobytes()
        elif dtype == "f16":
            if np.any(np.abs(arr) > 65504):
                fail(f"{name} has values beyond the f16 range (use --dtype bf16 or f32)")
            raw = arr.astype("<f2").tobytes()
        else:
            raw = arr.astype("<f4").tobytes()
        header[name] = {"dtype": st_name, "shape": list(arr.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for raw in blobs:
            f.write(raw)


# ------------------------------------------------------------------ conversion

def convert(sd, margs, opt):
    """The config (metadata strings) and the tensors in canonical order."""
    if sd.has("transformer.wpe.weight"):
        fail("transformer.wpe.weight: learned position embeddings are not supported "
             "(hadamix uses RoPE)")
    wte = sd.take("transformer.wte.weight")
    if wte.ndim != 2:
        fail(f"transformer.wte.weight has shape {list(wte.shape)}, expected [vocab, d]")
    V, d = wte.shape
    n_embd = margs_int(margs, "n_embd")
    if n_embd is not None and n_embd != d:
        fail(f"model_args n_embd = {n_embd} but transformer.wte.weight is [{V}, {d}]")
    ids = {int(m.group(1)) for k in sd.t for m in [re.match(r"transformer\.h\.(\d+)\.", k)] if m}
    n_layer = len(ids)
    if n_layer == 0 or ids != set(range(n_layer)):
        fail(f"expected layers transformer.h.0 .. h.{n_layer - 1}, found {sorted(ids)}")
    if margs_int(margs, "n_layer") not in (None, n_layer):
        fail(f"model_args n_layer = {margs['n_layer']} but the state dict has {n_layer} layers")

    # heads: options, then model_args, then shapes (nanoGPT: head_dim = n_embd / n_head)
    H = opt.n_head or margs_int(margs, "n_head")
    G = opt.n_kv_head or margs_int(margs, "n_kv_head", "n_kv_heads", "n_query_groups")
    D = opt.head_dim or margs_int(margs, "head_dim")
    p0 = "transformer.h.0.attn."
    fused = sd.has(p0 + "c_attn.weight")
    if fused:
        rows = sd.t[p0 + "c_attn.weight"].shape[0]
        if H is None:
            if D is None or G is None:
                fail("cannot infer the number of heads from a fused c_attn: give --n-head")
            H = exact_div(rows, D, "c_attn rows / head_dim") - 2 * G
        if D is None:
            D = exact_div(d, H, "n_embd / n_head") if G is None else \
                exact_div(rows, H + 2 * G, "c_attn rows / (n_head + 2 n_kv_head)")
        if G is None:
            G = exact_div(exact_div(rows, D, "c_attn rows / head_dim") - H, 2, "k+v heads")
    else:
        for x in ("q", "k"):
            if not sd.has(p0 + x + "_proj.weight"):
                fail(f"missing tensor {p0}{x}_proj.weight (or {p0}c_attn.weight)")
        rows, kv_rows = sd.t[p0 + "q_proj.weight"].shape[0], sd.t[p0 + "k_proj.weight"].shape[0]
        if H is None and D is None:
            fail("cannot infer the number of heads from q_proj: give --n-head or --head-dim")
        D = D or exact_div(rows, H, "q_proj rows / n_head")
        H = H or exact_div(rows, D, "q_proj rows / head_dim")
        G = G or exact_div(kv_rows, D, "k_proj rows / head_dim")
    if min(H, G, D) < 1 or H % G or D % 2:
        fail(f"bad heads: n_head {H}, n_kv_head {G}, head_dim {D} (n_head must be a multiple "
             "of n_kv_head, head_dim even)")

    hadamard = sd.has(p0 + "alpha") or sd.has(p0 + "hadamard.alpha")
    out, ff = [("tok_emb", wte)], None
    for n in range(n_layer):
        p = f"transformer.h.{n}."
        for ln in ("ln_1", "ln_2"):
            sd.no_bias(p + ln + ".weight", "LayerNorm")
        out.append((f"layers.{n}.attn_norm", sd.take(p + "ln_1.weight", [d])))
        if fused:
            w = sd.take(p + "attn.c_attn.weight", [(H + 2 * G) * D, d])
            sd.no_bias(p + "attn.c_attn.weight")
            wq, wk, wv = np.split(w, [H * D, (H + G) * D])
        else:
            qkv = []
            for x, r in (("q", H), ("k", G), ("v", G)):
                qkv.append(sd.take(p + f"attn.{x}_proj.weight", [r * D, d]))
                sd.no_bias(p + f"attn.{x}_proj.weight")
            wq, wk, wv = qkv
        out += [(f"layers.{n}.attn.wq", wq), (f"layers.{n}.attn.wk", wk),
                (f"layers.{n}.attn.wv", wv)]
        if hadamard:
            if sd.has(p + "attn.c_proj.weight"):
                fail(f"{p}attn: both c_proj.weight and alpha/beta; use one output projection")
            if H * D != d:
                fail(f"the Hadamard output projection needs n_head * head_dim ({H * D}) == d ({d})")
            h = p + ("attn.hadamard." if sd.has(p + "attn.hadamard.alpha") else "attn.")
            out += [(f"layers.{n}.attn.alpha", sd.take(h + "alpha", [d])),
                    (f"layers.{n}.attn.beta", sd.take(h + "beta", [d]))]
        else:
            if sd.has(p + "attn.alpha") or sd.has(p + "attn.hadamard.alpha"):
                fail(f"{p}attn has alpha/beta but layer 0 has a dense c_proj; mixed layers")
            out.append((f"layers.{n}.attn.wo", sd.take(p + "attn.c_proj.weight", [d, H * D])))
            sd.no_bias(p + "attn.c_proj.weight")
        out.append((f"layers.{n}.ffn_norm", sd.take(p + "ln_2.weight", [d])))
        if sd.has(p + "mlp.c_fc.weight"):
            fc, proj = sd.t[p + "mlp.c_fc.weight"], sd.t.get(p + "mlp.c_proj.weight")
            if proj is not None and proj.ndim == 2 and proj.shape[1] == fc.shape[0]:
                fail(f"{p}mlp: c_proj takes all {fc.shape[0]} rows of c_fc: a GELU MLP, "
                     "hadamix supports SwiGLU only")
            ff = ff or exact_div(fc.shape[0], 2, f"{p}mlp.c_fc.weight rows")
            fc = sd.take(p + "mlp.c_fc.weight", [2 * ff, d])
            sd.no_bias(p + "mlp.c_fc.weight")
            w1, w3 = (fc[:ff], fc[ff:]) if opt.fc_order == "gate,up" else (fc[ff:], fc[:ff])
            w2 = sd.take(p + "mlp.c_proj.weight", [d, ff])
            sd.no_bias(p + "mlp.c_proj.weight")
        else:
            if not sd.has(p + "mlp.w1.weight"):
                fail(f"missing tensor {p}mlp.w1.weight (or mlp.c_fc.weight)")
            ff = ff or sd.t[p + "mlp.w1.weight"].shape[0]
            w1 = sd.take(p + "mlp.w1.weight", [ff, d])
            w3 = sd.take(p + "mlp.w3.weight", [ff, d])
            w2 = sd.take(p + "mlp.w2.weight", [d, ff])
            for x in ("w1", "w2", "w3"):
                sd.no_bias(p + f"mlp.{x}.weight")
        # hmx_swiglu's layout is [in, out]: W1, W3 [d, ff], W2 [ff, d]
        out += [(f"layers.{n}.ffn.w1", w1.T), (f"layers.{n}.ffn.w3", w3.T),
                (f"layers.{n}.ffn.w2", w2.T)]
    sd.no_bias("transformer.ln_f.weight", "LayerNorm")
    out.append(("norm", sd.take("transformer.ln_f.weight", [d])))
    tied = 1
    if sd.has("lm_head.weight"):
        head = sd.take("lm_head.weight", [V, d])
        sd.no_bias("lm_head.weight")
        if not np.array_equal(head, wte):
            tied = 0
            out.append(("lm_head", head))
    rest = sd.leftover()
    if rest:
        fail(f"unexpected tensors (not a name this converter knows): {', '.join(rest[:8])}"
             + (" ..." if len(rest) > 8 else ""))

    block = margs_int(margs, "block_size")
    f9 = lambda x: "%.9g" % float(np.float32(x))  # as hmx_model_save writes them
    meta = {"format": FORMAT, "n_layer": n_layer, "d_model": d, "n_head": H, "n_kv_head": G,
            "head_dim": D, "d_ff": ff, "vocab": V,
            "context": opt.context or block or 1024, "tied": tied,
            "rope_base": f9(opt.rope_base), "norm_eps": f9(opt.norm_eps),
            "outproj": "hadamard" if hadamard else "dense", "rope_style": opt.rope_style}
    return {k: str(v) for k, v in meta.items()}, out


def main(argv=None):
    ap = argparse.ArgumentParser(description="Convert a nanoGPT-style state dict (RoPE, "
                                 "SwiGLU) into a hadamix weights file (docs/MODEL.md).")
    ap.add_argument("input", help=".safetensors state dict, or .pt/.pth checkpoint (torch)")
    ap.add_argument("--out", required=True, help="output .safetensors")
    ap.add_argument("--n-head", type=int, help="query heads (default: model_args n_head)")
    ap.add_argument("--n-kv-head", type=int, help="KV heads (default: model_args or shapes)")
    ap.add_argument("--head-dim", type=int, help="head dim (default: from shapes, n_embd/n_head)")
    ap.add_argument("--rope-base", type=float, default=10000.0)
    ap.add_argument("--norm-eps", type=float, default=1e-5)
    ap.add_argument("--rope-style", choices=["half", "interleaved"], default="half",
                    help="half: rotate_half / GPT-NeoX pairs (i, i+D/2); interleaved: "
                    "view_as_complex / Meta Llama pairs (2i, 2i+1)")
    ap.add_argument("--context", type=int, help="default: model_args block_size, else 1024")
    ap.add_argument("--fc-order", choices=["gate,up", "up,gate"], default="gate,up",
                    help="row halves of a fused mlp.c_fc (default gate first)")
    ap.add_argument("--dtype", choices=["f32", "bf16", "f16"], default="f32")
    opt = ap.parse_args(argv)
    try:
        if opt.input.endswith((".pt", ".pth", ".bin", ".ckpt")):
            tensors, margs = read_torch(opt.input)
        else:
            tensors, margs = read_safetensors(opt.input)
        meta, out = convert(StateDict(tensors), margs, opt)
        write_safetensors(opt.out, out, meta, opt.dtype)
    except (ConvertError, OSError) as e:
        print(f"convert_nanogpt: {e}", file=sys.stderr)
        return 1
    print(f"convert_nanogpt: wrote {opt.out}: {meta['n_layer']} layers, d {meta['d_model']}, "
          f"{meta['n_head']} x {meta['head_dim']} heads ({meta['n_kv_head']} KV), d_ff "
          f"{meta['d_ff']}, vocab {meta['vocab']}, {meta['outproj']}, "
          f"{'tied' if meta['tied'] == '1' else 'untied'}, {opt.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
