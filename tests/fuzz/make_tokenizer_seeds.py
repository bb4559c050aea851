#!/usr/bin/env python3
"""Writes the tokenizer seed corpus (tests/fuzz/corpus_tokenizer/): GGUF files with
tokenizer.ggml.* metadata and Hugging Face tokenizer.json documents, built with struct and
json, independently of the hadamix readers. ok_* must be accepted, bad_* rejected
(tests/fuzz/fuzz_replay.c). Run from anywhere; the output is deterministic."""
import json
import math
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_tokenizer")

# GGUF value types
U32, I32, F32, BOOL, STR, ARR = 4, 5, 6, 7, 8, 9


def s(x):
    b = x.encode() if isinstance(x, str) else x
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, payload):
    return s(key) + struct.pack("<I", vtype) + payload


def kv_str(key, x):
    return kv(key, STR, s(x))


def kv_u32(key, x):
    return kv(key, U32, struct.pack("<I", x))


def kv_i32(key, x):
    return kv(key, I32, struct.pack("<i", x))


def kv_bool(key, x):
    return kv(key, BOOL, bytes([x]))


def kv_strs(key, xs):
    return kv(key, ARR, struct.pack("<IQ", STR, len(xs)) + b"".join(s(x) for x in xs))


def kv_i32s(key, xs):
    return kv(key, ARR, struct.pack("<IQ", I32, len(xs)) + b"".join(struct.pack("<i", x)
                                                                  for x in xs))


def kv_f32s(key, xs):
    return kv(key, ARR, struct.pack("<IQ", F32, len(xs)) + b"".join(struct.pack("<f", x)
                                                                  for x in xs))


def gguf(kvs):
    """A GGUF v3 file with metadata only (no tensors)."""
    b = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs)
    return b + b"\0" * ((-len(b)) % 32)


def gpt2_alphabet():
    """byte -> the character GPT-2's byte-level BPE writes it as."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


ALPHA = gpt2_alphabet()


def enc(text):
    """Text (str) in the byte alphabet."""
    return "".join(ALPHA[b] for b in text.encode())


TEXT = "The cat's 2024 naps: \u00e9t\u00e9 \u65e5\u672c <|im_start|>hi<|im_end|>  \n\n end"
# merges in rank order (byte-level strings); each result is a token
MERGES = [("t", "h"), ("th", "e"), (" ", "c"), (" c", "a"), (" ca", "t"), ("a", "p"),
          (" ", "n"), (" n", "ap"), ("'", "s"), ("e", "n"), (" ", "en"), (" en", "d"),
          ("\n", "\n"), (" ", "the"), ("h", "e"), ("T", "he"), ("2", "0")]


def bpe_vocab(skip=()):
    toks = [ALPHA[b] for b in range(256) if b not in skip]
    for a, b in MERGES:
        toks.append(enc(a + b))
    return toks


def bpe_gguf(pre, types=True, skip=(), text=TEXT, merges=None, extra_kvs=(), ids=None):
    """ids: the kvs for BOS, EOS and add_bos_token in place of the defaults (a
    list; the default ids are the last two tokens, BOS not added)."""
    toks = bpe_vocab(skip) + ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
    n = len(toks)
    kvs = [kv_str("tokenizer.ggml.model", "gpt2"), kv_strs("tokenizer.ggml.tokens", toks)]
    if pre is not None:
        kvs.append(kv_str("tokenizer.ggml.pre", pre))
    if types:  # True, or how many types to write (a wrong count)
        ty = [1] * (n - 3) + [3, 3, 4]
        kvs.append(kv_i32s("tokenizer.ggml.token_type", ty if types is True else ty[:types]))
    m = merges if merges is not None else [enc(a) + " " + enc(b) for a, b in MERGES]
    if ids is None:
        ids = [kv_u32("tokenizer.ggml.bos_token_id", n - 1),
               kv_u32("tokenizer.ggml.eos_token_id", n - 2),
               kv_bool("tokenizer.ggml.add_bos_token", 0)]
    kvs += [kv_strs("tokenizer.ggml.merges", m)] + ids + [kv_str("fuzz.text", text)]
    return gguf(kvs + list(extra_kvs))


SPM_PIECES = [("\u2581", -1.0), ("\u2581t", -2.0), ("he", -3.0), ("\u2581the", -1.5),
              ("\u2581c", -4.0), ("at", -4.5), ("\u2581cat", -2.5), ("\u2581\u2581", -6.0),
              ("\u65e5", -7.0), ("na", -8.0), ("ps", -8.0), ("\u2581naps", -3.0), ("a", -9),
              ("t", -9), ("c", -9), ("h", -9), ("e", -9), ("n", -9), ("p", -9), ("s", -9)]


def spm_gguf(byte_tokens=True, scores=None, byte_names=None, space_prefix=None, text=TEXT,
             unk=0, bos=1):
    toks, types, sc = ["<unk>", "<s>", "</s>"], [2, 3, 3], [0.0, 0.0, 0.0]
    if byte_tokens:
        for b in range(256):
            toks.append(byte_names(b) if byte_names else "<0x%02X>" % b)
            types.append(6)
            sc.append(0.0)
    for p, v in SPM_PIECES:
        toks.append(p)
        types.append(1)
        sc.append(v)
    kvs = [kv_str("tokenizer.ggml.model", "llama"), kv_strs("tokenizer.ggml.tokens", toks),
           kv_i32s("tokenizer.ggml.token_type", types),
           kv_f32s("tokenizer.ggml.scores", scores(sc) if scores else sc),
           kv_u32("tokenizer.ggml.unknown_token_id", unk)]
    if bos is not None:
        kvs.append(kv_u32("tokenizer.ggml.bos_token_id", bos))
    kvs += [kv_u32("tokenizer.ggml.eos_token_id", 2), kv_str("fuzz.text", text)]
    if space_prefix is not None:
        kvs.append(kv_bool("tokenizer.ggml.add_space_prefix", space_prefix))
    return gguf(kvs)


LLAMA3_PATTERN = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?"
                  "[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")


def hf_json(pre, ignore_merges=False, pairs=False, model_extra=None, root_extra=None,
            vocab_edit=None):
    toks = bpe_vocab()
    vocab = {t: i for i, t in enumerate(toks)}
    if vocab_edit:
        vocab = vocab_edit(vocab)
    merges = [[enc(a), enc(b)] if pairs else enc(a) + " " + enc(b) for a, b in MERGES]
    model = {"type": "BPE", "dropout": None, "unk_token": None, "byte_fallback": False,
             "ignore_merges": ignore_merges, "vocab": vocab, "merges": merges}
    model.update(model_extra or {})
    n = len(toks)
    doc = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [{"id": n, "content": "<|im_start|>", "special": True},
                            {"id": n + 1, "content": "<|im_end|>", "special": True},
                            {"id": n + 2, "content": "<tool>", "special": False}],
           "normalizer": None, "pre_tokenizer": pre, "model": model, "fuzz_text": TEXT}
    doc.update(root_extra or {})
    return json.dumps(doc, ensure_ascii=False, indent=1).encode()


BYTELEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": True}
SMOLLM = {"type": "Sequence", "pretokenizers": [
    {"type": "Digits", "individual_digits": True}, BYTELEVEL]}
LLAMA3 = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated",
     "invert": False},
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        # accepted
        "ok_gpt2_smollm.gguf": bpe_gguf("smollm"),
        "ok_gpt2_llama_bpe_missing_bytes.gguf": bpe_gguf("llama-bpe", skip=(4, 0xC3, 0xFF)),
        "ok_gpt2_default_no_types.gguf": bpe_gguf("default", types=False),
        "ok_gpt2_no_pre.gguf": bpe_gguf(None, text="a\x00b \xff\xfe x"),
        "ok_spm.gguf": spm_gguf(),
        # <|im_end|> ends a turn: an end-of-sequence id beside EOS
        "ok_gpt2_eot.gguf": bpe_gguf("smollm", extra_kvs=[
            kv_u32("tokenizer.ggml.eot_token_id", len(bpe_vocab()) + 1)]),
        "ok_gpt2_no_special_ids.gguf": bpe_gguf("gpt2", ids=[]),
        "ok_spm_no_bytes_no_prefix.gguf": spm_gguf(byte_tokens=False, space_prefix=0),
        "ok_hf_gpt2.json": hf_json(BYTELEVEL),
        "ok_hf_smollm_pairs.json": hf_json(SMOLLM, pairs=True),
        "ok_hf_llama3.json": hf_json(LLAMA3, ignore_merges=True),
        # rejected
        "bad_model_bert.gguf": gguf([kv_str("tokenizer.ggml.model", "bert"),
                                     kv_strs("tokenizer.ggml.tokens", ["a"])]),
        "bad_pre_unknown.gguf": bpe_gguf("qwen2"),
        "bad_no_tokens.gguf": gguf([kv_str("tokenizer.ggml.model", "gpt2")]),
        "bad_merge_not_in_vocab.gguf": bpe_gguf("gpt2", merges=["x yz"]),
        "bad_merge_no_space.gguf": bpe_gguf("gpt2", merges=["ab"]),
        "bad_types_short.gguf": bpe_gguf("gpt2", types=100),
        # the unknown token is <s>, a control token: text with a character outside
        # the vocabulary would encode to BOS (found by fuzz_tokenizer, session 48)
        "bad_spm_unk_control.gguf": spm_gguf(byte_tokens=False, unk=1),
        "bad_spm_nan_score.gguf": spm_gguf(scores=lambda sc: sc[:5] + [math.nan] + sc[6:]),
        "bad_spm_byte_name.gguf": spm_gguf(byte_names=lambda b: "<0x%02X>" % b if b != 7
                                           else "<0xZZ>"),
        # special ids (session 49): one present but outside the vocabulary or of
        # another type was taken as absent (no BOS, or no EOS to stop at)
        "bad_bos_out_of_range.gguf": bpe_gguf("gpt2", ids=[
            kv_u32("tokenizer.ggml.bos_token_id", 1000), kv_u32("tokenizer.ggml.eos_token_id", 3)]),
        "bad_eos_negative.gguf": bpe_gguf("gpt2", ids=[kv_i32("tokenizer.ggml.eos_token_id", -1)]),
        "bad_eos_string.gguf": bpe_gguf("gpt2", ids=[kv_str("tokenizer.ggml.eos_token_id", "2")]),
        "bad_eot_out_of_range.gguf": bpe_gguf("gpt2", ids=[
            kv_u32("tokenizer.ggml.eos_token_id", 3), kv_u32("tokenizer.ggml.eot_token_id", 5000)]),
        "bad_add_bos_not_bool.gguf": bpe_gguf("gpt2", ids=[
            kv_u32("tokenizer.ggml.bos_token_id", 3), kv_u32("tokenizer.ggml.add_bos_token", 1)]),
        "bad_add_bos_without_bos.gguf": bpe_gguf("gpt2", ids=[
            kv_bool("tokenizer.ggml.add_bos_token", 1)]),
        "bad_pre_not_string.gguf": bpe_gguf(None, extra_kvs=[kv_u32("tokenizer.ggml.pre", 2)]),
        "bad_spm_unk_out_of_range.gguf": spm_gguf(unk=100000),
        "bad_spm_no_bos.gguf": spm_gguf(bos=None),
        "bad_not_gguf_or_json.bin": b"GGUG" + bytes(range(40)),
        "bad_hf_not_bpe.json": hf_json(BYTELEVEL, model_extra={"type": "WordPiece"}),
        "bad_hf_normalizer.json": hf_json(BYTELEVEL, root_extra={"normalizer": {"type": "NFC"}}),
        "bad_hf_pretok_prefix_space.json": hf_json(dict(BYTELEVEL, add_prefix_space=True)),
        "bad_hf_repeated_id.json": hf_json(BYTELEVEL, vocab_edit=lambda v: dict(v, zz=5)),
        "bad_hf_hole.json": hf_json(BYTELEVEL, vocab_edit=lambda v: {
            k: i for k, i in v.items() if i != 7}),
        "bad_hf_huge_id.json": hf_json(BYTELEVEL, vocab_edit=lambda v: dict(v, zz=1 << 30)),
        "bad_hf_truncated.json": hf_json(BYTELEVEL)[:300],
    }
    for name, data in sorted(seeds.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
