/* The memory read-bandwidth probe shared by `hmx bench-model` and
 * hmx-bench-decode-ops, and the GEMV read orders of `hmx bench gemm`
 * (tools/read_bandwidth.c). */
#ifndef HMX_TOOLS_READ_BANDWIDTH_H
#define HMX_TOOLS_READ_BANDWIDTH_H

#include <stdint.h>

/* GB/s of `threads` threads (0: OpenMP's default) reading a 512 MiB buffer,
 * best of 3; 0 if the buffer cannot be allocated. */
double hmx_read_bandwidth(int threads);

/* Reads of a GEMV's weights w [n, k] (row-major, as hmx_gemm's trans_b B)
 * that do no arithmetic but sums, for `hmx bench gemm` to time beside the
 * copy: in address order, and in the order the x86 trans_b GEMV reads them
 * (simd/x86/gemm_x86.h, gx_gemv_nt): groups of 16 rows, and in each group,
 * for p = 0, 16, 32, .., the 16 floats p .. p + 15 of every row in turn
 * (one 64-byte line of each of 16 rows k floats apart), then the last n % 16
 * rows in order. Each returns the sum so that the reads stay. */
float hmx_read_in_order(const float *w, int64_t n, int64_t k);
float hmx_read_16_rows(const float *w, int64_t n, int64_t k);

#endif
