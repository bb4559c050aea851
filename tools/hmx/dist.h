/* The distribution of the difference between two float arrays (hmx diff
 * --tier): max and mean absolute difference, and a histogram of the
 * distance in binary32 ulps, printed as text or written as an SVG plot. */
#ifndef HMX_CLI_DIST_H
#define HMX_CLI_DIST_H

#include <stdint.h>
#include <stdio.h>

/* Bins: 0 ulp, 1, 2-3, 4-7, ..., 2^(k-1)..2^k-1, the last >= 2^21. */
#define HMX_DIST_BINS 23

typedef struct hmx_dist {
  int64_t n;            /* pairs where both are finite */
  int64_t nonfinite;    /* pairs where either is NaN or inf */
  double max_abs, sum_abs, max_rel;
  double max_ulp;
  int64_t hist[HMX_DIST_BINS];
} hmx_dist;

void hmx_dist_init(hmx_dist *d);
/* a: the values of the tier under test, b: the reference (exact). */
void hmx_dist_add(hmx_dist *d, const float *a, const float *b, int64_t n);
/* "0", "1", "2-3", ..., ">=2097152". */
const char *hmx_dist_bin_label(int bin, char *buf, size_t len);
/* The summary line and the histogram (bins with counts only). */
void hmx_dist_print(FILE *out, const char *what, const hmx_dist *d);
/* An SVG bar chart of the ulp histogram (log-scaled counts); 0 or an exit
 * code after printing the error. */
int hmx_dist_svg(const char *path, const char *title, const hmx_dist *d);

#endif
