/* See dist.h. Plain C: the SVG is written by hand, no plotting library. */
#include "dist.h"
#include "hmx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hmx_dist_init(hmx_dist *d) { memset(d, 0, sizeof *d); }

/* Position of a float on the integer line where adjacent floats differ by 1
 * (+0 and -0 both 0), so |key(a) - key(b)| is their distance in ulps. */
static int64_t key(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

static int bin_of(double ulps) {
  if (ulps < 1) return 0;
  int b = 1;
  double lim = 2;
  while (ulps >= lim && b < HMX_DIST_BINS - 1) {
    b++;
    lim *= 2;
  }
  return b;
}

void hmx_dist_add(hmx_dist *d, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (!isfinite(a[i]) || !isfinite(b[i])) {
      d->nonfinite++;
      continue;
    }
    double e = fabs((double)a[i] - (double)b[i]);
    double u = (double)llabs(key(a[i]) - key(b[i]));
    d->n++;
    d->sum_abs += e;
    if (e > d->max_abs) d->max_abs = e;
    if (b[i] != 0 && e / fabs((double)b[i]) > d->max_rel) d->max_rel = e / fabs((double)b[i]);
    if (u > d->max_ulp) d->max_ulp = u;
    d->hist[bin_of(u)]++;
  }
}

const char *hmx_dist_bin_label(int bin, char *buf, size_t len) {
  if (bin == 0) snprintf(buf, len, "0");
  else if (bin == 1) snprintf(buf, len, "1");
  else if (bin == HMX_DIST_BINS - 1) snprintf(buf, len, ">=%.0f", ldexp(1.0, bin - 1));
  else snprintf(buf, len, "%.0f-%.0f", ldexp(1.0, bin - 1), ldexp(1.0, bin) - 1);
  return buf;
}

void hmx_dist_print(FILE *out, const char *what, const hmx_dist *d) {
  fprintf(out, "%s: %lld values, max abs %.6g, mean abs %.6g, max rel %.6g, max ulp %.0f",
          what, (long long)d->n, d->max_abs, d->n ? d->sum_abs / (double)d->n : 0.0, d->max_rel,
          d->max_ulp);
  if (d->nonfinite) fprintf(out, ", %lld pairs with a NaN/inf", (long long)d->nonfinite);
  fprintf(out, "\n  ulp histogram:");
  for (int b = 0; b < HMX_DIST_BINS; b++) {
    if (!d->hist[b]) continue;
    char lab[32];
    fprintf(out, " %s:%lld", hmx_dist_bin_label(b, lab, sizeof lab), (long long)d->hist[b]);
  }
  fprintf(out, "\n");
}

int hmx_dist_svg(const char *path, const char *title, const hmx_dist *d) {
  FILE *f = fopen(path, "w");
  if (!f) return hmx_cli_error(HMX_EXIT_FAIL, "diff: cannot write %s", path);
  const int W = 900, H = 420, left = 70, right = 20, top = 60, bottom = 80;
  const double pw = W - left - right, ph = H - top - bottom;
  int64_t most = 1;
  for (int b = 0; b < HMX_DIST_BINS; b++)
    if (d->hist[b] > most) most = d->hist[b];
  const double lmax = log10((double)most + 1);
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
             "font-family=\"sans-serif\" font-size=\"11\">\n", W, H);
  fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
  fprintf(f, "<text x=\"%d\" y=\"20\" font-size=\"14\">", left);
  for (const char *c = title; *c; c++) { /* escape for XML */
    if (*c == '<') fputs("&lt;", f);
    else if (*c == '>') fputs("&gt;", f);
    else if (*c == '&') fputs("&amp;", f);
    else fputc(*c, f);
  }
  fprintf(f, "</text>\n<text x=\"%d\" y=\"40\">%lld values; max abs %.4g, mean abs %.4g, max ulp "
             "%.0f%s</text>\n", left, (long long)d->n, d->max_abs,
          d->n ? d->sum_abs / (double)d->n : 0.0, d->max_ulp,
          d->nonfinite ? " (NaN/inf pairs not shown)" : "");
  const double bw = pw / HMX_DIST_BINS;
  for (int b = 0; b < HMX_DIST_BINS; b++) {
    double h = d->hist[b] ? ph * log10((double)d->hist[b] + 1) / lmax : 0;
    double x = left + b * bw;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#3b6ea5\"/>\n",
            x + 2, top + ph - h, bw - 4, h);
    if (d->hist[b])
      fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">%lld</text>\n",
              x + bw / 2, top + ph - h - 3, (long long)d->hist[b]);
    char lab[32];
    fprintf(f, "<text transform=\"translate(%.1f,%.1f) rotate(-45)\" text-anchor=\"end\" "
               "font-size=\"9\">%s</text>\n", x + bw / 2, top + ph + 12,
            hmx_dist_bin_label(b, lab, sizeof lab));
  }
  fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", left,
          top + ph, left + pw, top + ph);
  fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">distance in binary32 ulps "
             "(bins of powers of two)</text>\n", left + pw / 2, H - 8);
  fprintf(f, "<text transform=\"translate(16,%.1f) rotate(-90)\" text-anchor=\"middle\">count "
             "(log scale)</text>\n</svg>\n", top + ph / 2);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) return hmx_cli_error(HMX_EXIT_FAIL, "diff: error writing %s", path);
  return 0;
}
