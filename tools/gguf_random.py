#!/usr/bin/env python3
"""Write a GGUF v3 "llama" model with random weights, for benchmarking only.

Purpose: compare `hmx bench-model` against llama.cpp's `llama-bench` on the
same shapes.  The file holds the shapes of hadamix's model presets (tiny,
small, base) filled with seeded normal noise (std 0.02); the output is
meaningless text, but the compute per token is identical to a trained model.

Layout (llama.cpp "llama" architecture): token_embd is tied with the LM head
(no output.weight tensor), per block attn_norm/attn_q/k/v/output and
ffn_norm/ffn_gate/ffn_up/ffn_down, then output_norm; no biases; norms are F32.
Note: llama.cpp's "llama" arch applies RoPE to adjacent pairs (GPT-J style),
hadamix uses the NeoX half-split; the cost is the same, the numbers are not.

A minimal but valid SentencePiece ("llama") vocabulary is written: <unk>,
<s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then filler tokens.
llama-bench feeds random token ids, so the vocabulary content is irrelevant.

`--dtype q4_k_m` writes llama.cpp's Q4_K_M mix (llama-quant.cpp): Q4_K matrices, Q6_K for
ffn_down and attn_v in its "more bits" layers and for the (tied) embedding. `--dtype q3_k_m`
its Q3_K_M mix for the llama architecture: Q3_K matrices, attn_v Q5_K in the first two
layers and Q4_K after, ffn_down Q5_K in the first n_layer/16 layers and Q4_K after,
attn_output Q4_K, the embedding Q6_K. `--dtype q2_k`: Q2_K matrices, attn_v and ffn_down
Q3_K, the embedding Q6_K. `--dtype iq4_xs` its IQ4_XS mix without an imatrix: IQ4_XS
matrices, ffn_down Q5_K in the first n_layer/8 layers, the embedding Q6_K. The K and IQ4
types go through tests/gguf_quantizers.py, since the gguf package only dequantizes them.

Needs: pip install gguf numpy  (gguf is llama.cpp's own GGUF writer library)

Usage:
  python3 tools/gguf_random.py --config tiny --dtype f16 --out /tmp/tiny-f16.gguf
  llama-bench -m /tmp/tiny-f16.gguf -t 2 -p 512 -n 128 -r 3
"""
import argparse
import os
import sys

import numpy as np
import gguf

# name: (layers, d_model, heads, head_dim, kv_heads, d_ff)
CONFIGS = {
    "tiny": (12, 768, 12, 64, 12, 2048),
    "small": (24, 1024, 16, 64, 16, 2752),
    "base": (24, 1536, 16, 96, 16, 4096),
}
VOCAB, CTX, ROPE_BASE, RMS_EPS = 50304, 1024, 10000.0, 1e-5

DTYPES = {
    "f32": (gguf.GGMLQuantizationType.F32, gguf.LlamaFileType.ALL_F32),
    "f16": (gguf.GGMLQuantizationType.F16, gguf.LlamaFileType.MOSTLY_F16),
    "bf16": (gguf.GGMLQuantizationType.BF16, gguf.LlamaFileType.MOSTLY_BF16),
    "q4_1": (gguf.GGMLQuantizationType.Q4_1, gguf.LlamaFileType.MOSTLY_Q4_1),
    "q4_k_m": (None, gguf.LlamaFileType.MOSTLY_Q4_K_M),
    "q3_k_m": (None, gguf.LlamaFileType.MOSTLY_Q3_K_M),
    "q2_k": (None, gguf.LlamaFileType.MOSTLY_Q2_K),
    "iq4_xs": (None, gguf.LlamaFileType.MOSTLY_IQ4_XS),
}


def k_mix(name: str, n_layer: int, dtype: str):
    """The ggml type of a matrix in a K-quant mix (rows of whole 256-element blocks)."""
    Q = gguf.GGMLQuantizationType
    if name == "token_embd.weight":
        return Q.Q6_K
    i = int(name.split(".")[1])
    if dtype == "q3_k_m":
        if name.endswith("attn_v.weight"):
            return Q.Q5_K if i < 2 else Q.Q4_K
        if name.endswith("ffn_down.weight"):
            return Q.Q5_K if i < n_layer // 16 else Q.Q4_K
        return Q.Q4_K if name.endswith("attn_output.weight") else Q.Q3_K
    if dtype == "q2_k":
        return Q.Q3_K if name.endswith(("attn_v.weight", "ffn_down.weight")) else Q.Q2_K
    if dtype == "iq4_xs":
        return Q.Q5_K if name.endswith("ffn_down.weight") and i < n_layer // 8 else Q.IQ4_XS
    more = i < n_layer // 8 or i >= 7 * n_layer // 8 or (i - n_layer // 8) % 3 == 2
    if name.endswith(("ffn_down.weight", "attn_v.weight")) and more:
        return Q.Q6_K
    return Q.Q4_K


def quantize_any(x, qt):
    Q = gguf.GGMLQuantizationType
    if qt in (Q.Q2_K, Q.Q3_K, Q.Q4_K, Q.Q5_K, Q.Q6_K, Q.IQ4_XS):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "tests"))
        import gguf_quantizers as gq
        if qt == Q.Q2_K:
            return gq.quantize_q2_k(x)
        if qt == Q.Q3_K:
            return gq.quantize_q3_k(x)
        if qt == Q.IQ4_XS:
            return gq.quantize_iq4_xs(x)
        return gq.quantize_q6_k(x) if qt == Q.Q6_K else gq.quantize_k(x, qt == Q.Q5_K)
    return gguf.quants.quantize(x, qt)


def add_vocab(w: gguf.GGUFWriter) -> None:
    toks = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
    types += [gguf.TokenType.BYTE] * 256
    n_fill = VOCAB - len(toks)
    toks += [f"tok{i}" for i in range(n_fill)]
    types += [gguf.TokenType.NORMAL] * n_fill
    scores = [0.0] * 259 + [-float(i) for i in range(n_fill)]
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    n_layer, d, n_head, hd, n_kv, d_ff = CONFIGS[a.config]
    qtype, ftype = DTYPES[a.dtype]
    rng = np.random.default_rng(a.seed)

    w = gguf.GGUFWriter(a.out, "llama")  # writes GGUF version 3
    w.add_name(f"hadamix-{a.config}-random")
    w.add_context_length(CTX)
    w.add_embedding_length(d)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(d_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(ROPE_BASE)
    w.add_layer_norm_rms_eps(RMS_EPS)
    w.add_vocab_size(VOCAB)
    w.add_file_type(ftype)
    add_vocab(w)

    def mat(name: str, rows: int, cols: int) -> None:
        # numpy shape (rows, cols) = GGUF ne (cols, rows): y = W x, x has cols
        x = (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02)
        qt = qtype if qtype is not None else k_mix(name, n_layer, a.dtype)
        w.add_tensor(name, quantize_any(x, qt), raw_dtype=qt)

    def norm(name: str, n: int) -> None:
        w.add_tensor(name, np.ones(n, dtype=np.float32))

    mat("token_embd.weight", VOCAB, d)
    for i in range(n_layer):
        p = f"blk.{i}."
        norm(p + "attn_norm.weight", d)
        mat(p + "attn_q.weight", n_head * hd, d)
        mat(p + "attn_k.weight", n_kv * hd, d)
        mat(p + "attn_v.weight", n_kv * hd, d)
        mat(p + "attn_output.weight", d, n_head * hd)
        norm(p + "ffn_norm.weight", d)
        mat(p + "ffn_gate.weight", d_ff, d)
        mat(p + "ffn_up.weight", d_ff, d)
        mat(p + "ffn_down.weight", d, d_ff)
    norm("output_norm.weight", d)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
