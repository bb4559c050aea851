/* The constants of hmx_canon_sincos_f64 (src/canon_rope.c, docs/NUMERICS.md
 * §E "RoPE angles"), shared with the SIMD mirrors of the angle table
 * (simd/x86/rope_table_x86.h) so that both read one definition. Internal. */
#ifndef HMX_CANON_SINCOS_H
#define HMX_CANON_SINCOS_H

#define HMX_SC_SHIFT52 0x1.8p+52 /* 1.5 * 2^52: round-to-integer shifter for |v| < 2^51 */
#define HMX_SC_TWO_OVER_PI 0x1.45f306dc9c883p-1
/* pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (+ 4e-35); PIO2_1 and PIO2_2 have at most
 * 28 significant bits, so k * PIO2_1 and k * PIO2_2 are exact for |k| < 2^25. */
#define HMX_SC_PIO2_1 0x1.921fb54p+0
#define HMX_SC_PIO2_2 0x1.10b4612p-30
#define HMX_SC_PIO2_3 (-0x1.676733ae8fe48p-60)
/* arguments with |x| <= this are reduced exactly (|k| < 2^25) */
#define HMX_SC_MAX_ARG 0x1p25

/* sin(r) = r + r^3 S(r^2): coefficients (-1)^j / (2j+1)!, j = 1..9. */
extern const double hmx_canon_sin_c[9];
/* cos(r) = 1 - r^2/2 + r^4 C(r^2): coefficients (-1)^j / (2j)!, j = 2..9. */
extern const double hmx_canon_cos_c[8];

#endif
