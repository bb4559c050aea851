/* Public entry point of strassen (include/hadamix.h, docs/NUMERICS.md §strassen). */
#include "ops_stage.h"

#define TRY(expr) do { hmx_status s_ = (expr); if (s_ != HMX_OK) return s_; } while (0)

/* The default cutoff: below 64 the recursion's extra additions cost more
 * than the multiplications they save on every CPU we measured (issue 7). */
#define HMX_STRASSEN_DEFAULT_CUTOFF 64
#define HMX_STRASSEN_MAX_CUTOFF (INT64_C(1) << 20)

hmx_status hmx_strassen(const hmx_context *ctx, const hmx_tensor *a, const hmx_tensor *b,
                        int64_t cutoff, hmx_tensor *c) {
  static const char op[] = "strassen";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "a", a, 2));
  TRY(hmx_check_float(op, "b", b, 2));
  TRY(hmx_check_float(op, "c", c, 2));
  int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  TRY(hmx_check_dim(op, "b", b, 0, k, "K, the columns of a"));
  TRY(hmx_check_dim(op, "c", c, 0, m, "M, the rows of a"));
  TRY(hmx_check_dim(op, "c", c, 1, n, "N, the columns of b"));
  if (cutoff < 0 || cutoff > HMX_STRASSEN_MAX_CUTOFF)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT,
                    "strassen: cutoff must be 0 (default %d) or 1..2^20 (got %lld)",
                    HMX_STRASSEN_DEFAULT_CUTOFF, (long long)cutoff);
  if (cutoff == 0) cutoff = HMX_STRASSEN_DEFAULT_CUTOFF;
  TRY(hmx_check_alias(op, "c", c, "a", a, 0));
  TRY(hmx_check_alias(op, "c", c, "b", b, 0));
  const hmx_tensor *place[] = {a, b, c};
  static const char *const place_names[] = {"a", "b", "c"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 3, 0));
  if (ex.dev) return hmx_no_device(op, &ex);
  hmx_status (*fn)(const hmx_strassen_args *);
  HMX_PICK(ex, strassen, fn);
  hmx_staging st;
  const hmx_tensor *ins[] = {a, b};
  hmx_status s = hmx_staging_begin(&st, ins, 2, c);
  if (s == HMX_OK) {
    hmx_strassen_args g = {st.in[0].p, st.in[1].p, st.out.p, m, n, k, cutoff, ex.threads};
    s = fn(&g);
  }
  return hmx_staging_finish(&st, c, s, op, &ex);
}
