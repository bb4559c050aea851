#!/usr/bin/env python3
"""SentencePiece BPE (tokenizer.ggml.model = "llama": Llama 2, TinyLlama) against Google's
sentencepiece package.

Usage: test_spm.py HMX WORKDIR   (ctest tokenizer_spm: tests/t_gguf.cmake)

A BPE model is trained here with sentencepiece (Llama 2's settings: byte fallback, split
digits, identity normalization, dummy prefix, whitespace kept) on a generated corpus, its
pieces, scores and types are written as GGUF tokenizer metadata with the gguf package, and
`hmx tokenize --no-special` must give sentencepiece's ids on varied texts (unicode outside the
vocabulary -> byte fallback, whitespace runs, digits, code); the pieces decode back to the
text with the dummy prefix's space. Exit 0 pass, 1 fail, 77 skip (sentencepiece or gguf
missing).
"""
import os
import random
import subprocess
import sys

try:
    import sentencepiece as spm
    import gguf
except ImportError as e:
    print(f"test_spm: SKIP: {e} (pip install sentencepiece gguf)")
    sys.exit(77)

HMX, WORK = sys.argv[1:3]
os.makedirs(WORK, exist_ok=True)
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def train():
    rng = random.Random(3)
    words = ("the of and to in is was for on that with as by at from his her it an were are "
             "which this be or has had have not but their one all new first after also been "
             "other who its more two into time when there only can about would").split()
    lines = []
    for _ in range(3000):
        n = rng.randint(3, 15)
        lines.append(" ".join(rng.choice(words) if rng.random() < 0.8 else str(rng.randint(0, 9999))
                              for _ in range(n)) + rng.choice([".", ",", "!", "?", ""]))
    lines += ["Ünïcödé café naïve — “quotes” 日本語", "tabs\there", "  double  spaces  "] * 5
    corpus = os.path.join(WORK, "corpus.txt")
    with open(corpus, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    prefix = os.path.join(WORK, "spm")
    spm.SentencePieceTrainer.train(
        input=corpus, model_prefix=prefix, vocab_size=400, model_type="bpe", byte_fallback=True,
        split_digits=True, normalization_rule_name="identity", add_dummy_prefix=True,
        remove_extra_whitespaces=False, allow_whitespace_only_pieces=True,
        character_coverage=0.9995, minloglevel=2, num_threads=1)
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def write_gguf(sp, path):
    T = gguf.TokenType
    toks, scores, types = [], [], []
    for i in range(sp.get_piece_size()):
        toks.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        types.append(T.UNKNOWN if sp.is_unknown(i) else T.CONTROL if sp.is_control(i) else
                     T.BYTE if sp.is_byte(i) else T.UNUSED if sp.is_unused(i) else T.NORMAL)
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model("llama")
    w.add_token_list(toks)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(sp.bos_id())
    w.add_eos_token_id(sp.eos_id())
    w.add_unk_token_id(sp.unk_id())
    w.add_add_space_prefix(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()


TEXTS = [
    "Hello world",
    "the new time in the first one",
    " leading space and  double  spaces  ",
    "digits 1234567890 and 3.14",
    "Ünïcödé: naïve café, Straße, Ελληνικά, 日本語のテキスト 😀",
    "tabs\tand\nnewlines\r\n",
    "def f(x):\n    return x**2  # code",
    "theofandtoinis",  # merges across word pieces
    "x",
    "   ",
    "<s> not special </s>",
]


def main():
    sp = train()
    path = os.path.join(WORK, "spm_tokenizer.gguf")
    write_gguf(sp, path)
    for i, text in enumerate(TEXTS):
        tp = os.path.join(WORK, f"text{i}.txt")
        with open(tp, "wb") as f:
            f.write(text.encode("utf-8"))
        r = subprocess.run([HMX, "tokenize", "--model", path, "--file", tp, "--no-special"],
                           capture_output=True, timeout=60)
        got = [int(x) for x in r.stdout.decode().strip().split(",") if x] \
            if r.returncode == 0 else None
        want = sp.encode(text)
        check(got == want, f"text {i} ({len(want)} tokens) {text[:30]!r}" +
              ("" if got == want else f": hmx {got if got is not None else r.stderr.decode()} "
               f"vs sentencepiece {want}"))
        if got == want and want:
            d = subprocess.run([HMX, "tokenize", "--model", path, "--decode",
                                ",".join(map(str, want))], capture_output=True, timeout=60)
            check(d.stdout == (" " + text).encode("utf-8"), f"text {i} decodes back")
    print(f"test_spm: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
