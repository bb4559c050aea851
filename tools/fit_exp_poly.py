#!/usr/bin/env python3
"""Derive the polynomial coefficients of hmx_expf (src/canon_exp.c).

hmx_expf reduces x to r = x - n*ln2 with |r| <= A (A slightly above ln2/2,
to cover the reduction with a float log2(e) and |x| < 104) and evaluates

    e^r ~= 1 + t,   t = r + r^2 * Q(r),   Q(r) = C2 + C3 r + C4 r^2 + C5 r^3 + C6 r^4

The quantity that matters is the relative error of 1 + t, so this script
minimises

    max_{|r| <= A} | (1 + r + r^2 Q(r) - e^r) / e^r |

i.e. Q approximates g(r) = (e^r - 1 - r) / r^2 with weight w(r) = r^2 / e^r.
Method: Remez exchange on a dense grid in mpmath (60 digits), then the
coefficients are rounded to binary32 one at a time from C2 upwards, and the
remaining (higher) coefficients are re-fitted after each rounding so that
they absorb the rounding error of the lower ones.

Usage: python3 tools/fit_exp_poly.py            (prints the C99 hex literals)
Needs only mpmath (pip install mpmath). Deterministic: no randomness.
"""
import struct

import mpmath as mp

mp.mp.dps = 60

A = mp.mpf("0.3466")      # fit interval [-A, A]; ln2/2 = 0.34657359...
DEG_LO, DEG_HI = 2, 6     # coefficients C2..C6 of t = r + sum C_k r^k
GRID = 4000               # dense grid points per half interval


def g(r):
    """(e^r - 1 - r) / r^2, with its series near 0."""
    if abs(r) < mp.mpf("1e-12"):
        return mp.mpf(1) / 2 + r / 6 + r * r / 24
    return (mp.exp(r) - 1 - r) / (r * r)


def weight(r):
    return r * r / mp.exp(r)


def err(coefs, fixed, r):
    """Weighted error of the full polynomial at r (the relative error of e^r)."""
    q = mp.mpf(0)
    allc = dict(fixed)
    allc.update(coefs)
    for k in sorted(allc, reverse=True):
        q = q * r + allc[k]
    # allc holds C_k for k = DEG_LO..DEG_HI; Q(r) = sum C_k r^(k-2)
    return weight(r) * (q - g(r))


def horner(cs, r):
    q = mp.mpf(0)
    for c in reversed(cs):
        q = q * r + c
    return q


def remez(free_degs, fixed, grid, iters=30):
    """Minimax over the grid for the free coefficients with the fixed ones held.

    Coefficient of degree k multiplies r^(k-2) in Q. The weighted error is
    w(r) * (sum_{free} C_k r^(k-2) + sum_{fixed} C_k r^(k-2) - g(r)).
    """
    m = len(free_degs)
    npts = m + 1
    # initial reference: Chebyshev-like points, avoiding 0 (where w vanishes)
    ref = [grid[int(round((len(grid) - 1) * (1 - mp.cos(mp.pi * (i + 0.5) / npts)) / 2))]
           for i in range(npts)]
    best = None
    for _ in range(iters):
        # Solve sum_free C_k r_i^(k-2) + (-1)^i E / w(r_i) = g(r_i) - fixed(r_i)
        M = mp.matrix(npts, npts)
        b = mp.matrix(npts, 1)
        for i, r in enumerate(ref):
            for j, k in enumerate(free_degs):
                M[i, j] = r ** (k - 2)
            M[i, m] = (-1) ** i / weight(r)
            fx = sum(c * r ** (k - 2) for k, c in fixed.items())
            b[i] = g(r) - fx
        sol = mp.lu_solve(M, b)
        coefs = {k: sol[j] for j, k in enumerate(free_degs)}
        E = abs(sol[m])
        # error on the grid
        es = [err(coefs, fixed, r) for r in grid]
        emax = max(abs(e) for e in es)
        best = (coefs, emax, E)
        if emax <= E * (1 + mp.mpf("1e-6")):
            break
        # new reference: the extremum of each sign run of the error, keeping npts
        runs = []
        cur = None
        for r, e in zip(grid, es):
            if e == 0:
                continue
            s = 1 if e > 0 else -1
            if cur is None or s != cur[0]:
                cur = [s, r, e]
                runs.append(cur)
            elif abs(e) > abs(cur[2]):
                cur[1], cur[2] = r, e
        # drop smallest runs at the ends until npts remain (keeps alternation)
        while len(runs) > npts:
            if abs(runs[0][2]) < abs(runs[-1][2]):
                runs.pop(0)
            else:
                runs.pop()
        if len(runs) < npts:
            break
        ref = [run[1] for run in runs]
    return best


def to_f32(v):
    return struct.unpack("<f", struct.pack("<f", float(v)))[0]


def hexf(v):
    """C99 hex float literal of a binary32 value."""
    s = float(v).hex()  # '0x1.5555560000000p-3'
    mant, exp = s.split("p")
    mant = mant.rstrip("0")
    if mant.endswith("."):
        mant = mant[:-1]
    return f"{mant}p{exp}f"


def main():
    half = [A * i / GRID for i in range(1, GRID + 1)]
    grid = [-h for h in reversed(half)] + half  # excludes 0 (weight 0 there)

    degs = list(range(DEG_LO, DEG_HI + 1))
    coefs, emax, _ = remez(degs, {}, grid)
    print(f"# exact-coefficient minimax relative error: {mp.nstr(emax, 6)} "
          f"= 2^{mp.nstr(mp.log(emax, 2), 5)}")

    fixed = {}
    for i, k in enumerate(degs):
        fixed[k] = mp.mpf(to_f32(coefs[k]))
        rest = degs[i + 1:]
        if rest:
            coefs, emax, _ = remez(rest, fixed, grid)
            coefs = dict(coefs)
    emax = max(abs(err({}, fixed, r)) for r in grid)
    print(f"# float-coefficient relative error on [-A, A], A = {A}: "
          f"{mp.nstr(emax, 6)} = 2^{mp.nstr(mp.log(emax, 2), 5)}")
    for k in degs:
        print(f"#define HMX_EXP_C{k} {hexf(fixed[k])} /* {float(fixed[k]):.9g} */")


if __name__ == "__main__":
    main()
