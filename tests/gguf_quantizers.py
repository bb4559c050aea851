"""Plain quantizers for the GGUF K types, which the gguf pip package only dequantizes
(tests/test_gguf.py, tests/test_smollm2.py). Their accuracy does not matter to the tests:
each test dequantizes what these wrote with gguf.quants.dequantize (an implementation
independent of hadamix) and compares hadamix with a forward pass on those values. They
need only numpy."""
import numpy as np


def quantize_q6_k(a):
    """The gguf package has no Q6_K quantizer: a plain one here (per 16 elements a scale of
    max|x| / 31, per 256 an f16 d; layout as gguf.quants.Q6_K reads it). Its accuracy does not
    matter: the reference dequantizes what it wrote with gguf.quants.dequantize."""
    x = a.reshape(-1, 256).astype(np.float32)
    sub = np.abs(x.reshape(-1, 16, 16)).max(axis=2) / 31  # [nb, 16]
    d = (sub.max(axis=1) / 127).astype(np.float16)
    df = d.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.clip(np.round(np.where(df[:, None] > 0, sub / df[:, None], 0)), -128, 127)
        step = (df[:, None] * sc).repeat(16, axis=1)
        q = np.clip(np.round(np.where(step > 0, x / step, 0)), -32, 31).astype(np.int64) + 32
    nb = x.shape[0]
    ql = np.zeros((nb, 128), np.uint8)
    qh = np.zeros((nb, 64), np.uint8)
    for h in range(2):
        for g in range(4):
            v = q[:, 128 * h + 32 * g:128 * h + 32 * g + 32]
            lo = (v & 15).astype(np.uint8)
            idx = slice(64 * h + 32 * (g % 2), 64 * h + 32 * (g % 2) + 32)
            ql[:, idx] |= lo if g < 2 else (lo << 4).astype(np.uint8)
            qh[:, 32 * h:32 * h + 32] |= ((v >> 4) << (2 * g)).astype(np.uint8)
    blocks = np.concatenate([ql, qh, sc.astype(np.int8).view(np.uint8),
                             d.reshape(-1, 1).view(np.uint8)], axis=1)
    return blocks.reshape(*a.shape[:-1], a.shape[-1] // 256 * 210)


def affine_subblocks(x, qmax, smax):
    """x [blocks, sub-blocks, elements]: per sub-block a step (max - min) / qmax and an
    offset -min (min <= 0), as multiples sc, m <= smax of the block's f16 d and dmin, and
    the quants q <= qmax. Returns d, dmin (f16 [blocks]), sc, m ([blocks, sub-blocks]) and
    q (as x), all but d and dmin int64."""
    x = x.astype(np.float32)
    lo = np.minimum(x.min(axis=2), 0)
    step, off = (x.max(axis=2) - lo) / qmax, -lo
    d = (step.max(axis=1) / smax).astype(np.float16)
    dmin = (off.max(axis=1) / smax).astype(np.float16)
    df, dmf = d.astype(np.float32)[:, None], dmin.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.clip(np.round(np.where(df > 0, step / df, 0)), 0, smax).astype(np.int64)
        m = np.clip(np.round(np.where(dmf > 0, off / dmf, 0)), 0, smax).astype(np.int64)
        ds, ms = (df * sc)[:, :, None], (dmf * m)[:, :, None]
        q = np.clip(np.round(np.where(ds > 0, (x + ms) / ds, 0)), 0, qmax).astype(np.int64)
    return d, dmin, sc, m, q


def quantize_k(a, five):
    """A plain Q4_K / Q5_K quantizer (the gguf package has none): per sub-block of 32 a
    step (max - min) / 15 (or 31) and an offset -min (min <= 0), as 6-bit multiples of the
    block's f16 d and dmin; layout as gguf.quants.Q4_K / Q5_K read it. As for Q6_K, its
    accuracy does not matter: the reference dequantizes what it wrote."""
    qmax = 31 if five else 15
    d, dmin, sc, m, q = affine_subblocks(a.reshape(-1, 8, 32), qmax, 63)
    nb = q.shape[0]
    scales = np.zeros((nb, 12), np.int64)
    for s in range(8):
        if s < 4:
            scales[:, s] |= sc[:, s]
            scales[:, s + 4] |= m[:, s]
        else:
            scales[:, s + 4] |= (sc[:, s] & 15) | (m[:, s] & 15) << 4
            scales[:, s - 4] |= (sc[:, s] >> 4) << 6
            scales[:, s] |= (m[:, s] >> 4) << 6
    qs = np.zeros((nb, 128), np.int64)
    qh = np.zeros((nb, 32), np.int64)
    for s in range(8):
        j, t = divmod(s, 2)
        qs[:, 32 * j:32 * j + 32] |= (q[:, s] & 15) << (4 * t)
        qh |= ((q[:, s] >> 4) & 1) << s
    parts = [d.reshape(-1, 1).view(np.uint8), dmin.reshape(-1, 1).view(np.uint8),
             scales.astype(np.uint8)] + ([qh.astype(np.uint8)] if five else []) + \
        [qs.astype(np.uint8)]
    blocks = np.concatenate(parts, axis=1)
    return blocks.reshape(*a.shape[:-1], a.shape[-1] // 256 * (176 if five else 144))


def quantize_q2_k(a):
    """A plain Q2_K quantizer: per sub-block of 16 a step (max - min) / 3 and an offset
    -min (min <= 0) as 4-bit multiples of the block's f16 d and dmin (scales[s]: the step's
    multiple in the low nibble, the offset's in the high); element 128h + 32g + l in bits
    2g, 2g+1 of qs[32h + l]; layout as gguf.quants.Q2_K reads it."""
    d, dmin, sc, m, q = affine_subblocks(a.reshape(-1, 16, 16), 3, 15)
    q = q.reshape(-1, 2, 4, 32)  # [nb, h, g, l]
    qs = np.zeros((q.shape[0], 2, 32), np.int64)
    for g in range(4):
        qs |= q[:, :, g, :] << (2 * g)
    blocks = np.concatenate([(sc | m << 4).astype(np.uint8), qs.reshape(-1, 64).astype(np.uint8),
                             d.reshape(-1, 1).view(np.uint8), dmin.reshape(-1, 1).view(np.uint8)],
                            axis=1)
    return blocks.reshape(*a.shape[:-1], a.shape[-1] // 256 * 84)


def quantize_q3_k(a):
    """A plain Q3_K quantizer: per sub-block of 16 a scale max|x| / 4 as a signed 6-bit
    multiple (stored + 32) of the block's f16 d; q in -4..3 stored as u = q + 4, its low 2
    bits as Q2_K's, bit 2 in bit 4h + g of hmask[l]; the 6-bit scales' low nibbles in
    scales[s % 8] (high nibble for s >= 8), their top 2 bits at 2 (s / 4) of
    scales[8 + s % 4]; layout as gguf.quants.Q3_K reads it."""
    x = a.reshape(-1, 16, 16).astype(np.float32)
    sub = np.abs(x).max(axis=2) / 4  # [nb, 16]
    d = (sub.max(axis=1) / 31).astype(np.float16)
    df = d.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.clip(np.round(np.where(df > 0, sub / df, 0)), -32, 31).astype(np.int64)
        step = (df * sc)[:, :, None]
        q = np.clip(np.round(np.where(step != 0, x / step, 0)), -4, 3).astype(np.int64)
    u = (q + 4).reshape(-1, 2, 4, 32)  # [nb, h, g, l]
    nb = u.shape[0]
    qs = np.zeros((nb, 2, 32), np.int64)
    hmask = np.zeros((nb, 32), np.int64)
    for h in range(2):
        for g in range(4):
            qs[:, h] |= (u[:, h, g] & 3) << (2 * g)
            hmask |= (u[:, h, g] >> 2) << (4 * h + g)
    s6 = sc + 32
    scales = np.zeros((nb, 12), np.int64)
    for s in range(16):
        scales[:, s % 8] |= (s6[:, s] & 15) << (4 * (s // 8))
        scales[:, 8 + s % 4] |= (s6[:, s] >> 4) << (2 * (s // 4))
    blocks = np.concatenate([hmask.astype(np.uint8), qs.reshape(-1, 64).astype(np.uint8),
                             scales.astype(np.uint8), d.reshape(-1, 1).view(np.uint8)], axis=1)
    return blocks.reshape(*a.shape[:-1], a.shape[-1] // 256 * 110)


IQ4_VALUES = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113],
                      np.float32)


def iq4_indices(x, step):
    """x [..., 32], step [..., 1]: the index of the nearest IQ4_VALUES * step of each
    element, packed as Q4_0's nibbles (element j < 16 the low nibble of byte j, j + 16 its
    high nibble): [..., 16] uint8."""
    u = np.abs(x[..., None] - step[..., None] * IQ4_VALUES).argmin(axis=-1)
    return (u[..., :16] | u[..., 16:] << 4).astype(np.uint8)


def biggest(x):
    """The element of largest magnitude along the last axis (keepdims)."""
    return np.take_along_axis(x, np.abs(x).argmax(axis=-1)[..., None], axis=-1)


def quantize_iq4_nl(a):
    """A plain IQ4_NL quantizer (the gguf package only dequantizes it): per 32 elements an
    f16 d that maps the element of largest magnitude to the table's -127, each element the
    nearest table value times d; layout as gguf.quants.IQ4_NL reads it."""
    x = a.reshape(-1, 32).astype(np.float32)
    d = (biggest(x) / -127).astype(np.float16)
    qs = iq4_indices(x, d.astype(np.float32))
    blocks = np.concatenate([d.view(np.uint8), qs], axis=1)
    return blocks.reshape(*a.shape[:-1], a.shape[-1] // 32 * 18)


def quantize_iq4_xs(a):
    """A plain IQ4_XS quantizer: per sub-block of 32 a step as IQ4_NL's, stored as a signed
    6-bit multiple (ls - 32) of the block's f16 d (low nibbles in scales_l[s / 2], nibble
    s % 2; top 2 bits at 2s of the 16-bit scales_h); layout as gguf.quants.IQ4_XS reads it."""
    x = a.reshape(-1, 8, 32).astype(np.float32)
    step = biggest(x)[..., 0] / -127  # [nb, 8]
    d = (np.abs(step).max(axis=1) / 31).astype(np.float16)
    df = d.astype(np.float32)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ls = np.clip(np.round(np.where(df > 0, step / df, 0)) + 32, 0, 63).astype(np.int64)
    qs = iq4_indices(x, (df * (ls - 32))[..., None]).reshape(-1, 128)
    scales_h = np.zeros(x.shape[0], np.uint16)
    for s in range(8):
        scales_h |= ((ls[:, s] >> 4) << (2 * s)).astype(np.uint16)
    scales_l = (ls[:, 0::2] & 15 | (ls[:, 1::2] & 15) << 4).astype(np.uint8)
    blocks = np.concatenate([d.reshape(-1, 1).view(np.uint8), scales_h.reshape(-1, 1).view(np.uint8),
                             scales_l, qs], axis=1)
    return blocks.reshape(*a.shape[:-1], a.shape[-1] // 256 * 136)
