/* Public entry points of the multi-head FFNs: mhffn and flashmhf
 * (include/hadamix.h, docs/NUMERICS.md §mhffn, §flashmhf). */
#include "ops_stage.h"

#define TRY(expr) do { hmx_status s_ = (expr); if (s_ != HMX_OK) return s_; } while (0)

static hmx_status check_positive(const char *op, const char *what, int64_t v) {
  if (v < 1) return hmx_fail(HMX_ERR_SHAPE, "%s: %s must be >= 1 (got %lld)", op, what,
                             (long long)v);
  return HMX_OK;
}

/* x [T, d], w_in [d, H*dh], w_out [H*dh, d_out], y [T, d_out]: the parts
 * both ops share, given H and dh from the per-head weights. */
static hmx_status check_io(const char *op, const hmx_tensor *x, const hmx_tensor *w_in,
                           const hmx_tensor *w_out, const hmx_tensor *y, int64_t heads,
                           int64_t dh) {
  TRY(hmx_check_float(op, "x", x, 2));
  TRY(hmx_check_float(op, "w_in", w_in, 2));
  TRY(hmx_check_float(op, "w_out", w_out, 2));
  TRY(hmx_check_float(op, "y", y, 2));
  TRY(check_positive(op, "the number of heads H", heads));
  TRY(check_positive(op, "the head width dh", dh));
  TRY(hmx_check_dim(op, "w_in", w_in, 0, x->shape[1], "d, the columns of x"));
  TRY(hmx_check_dim(op, "w_in", w_in, 1, heads * dh, "H*dh of the head weights"));
  TRY(hmx_check_dim(op, "w_out", w_out, 0, heads * dh, "H*dh of the head weights"));
  TRY(hmx_check_dim(op, "y", y, 0, x->shape[0], "tokens of x"));
  TRY(hmx_check_dim(op, "y", y, 1, w_out->shape[1], "columns of w_out"));
  return HMX_OK;
}

static hmx_status check_no_alias(const char *op, const hmx_tensor *y, const hmx_tensor *const *ins,
                                 const char *const *names, int n) {
  for (int i = 0; i < n; i++) TRY(hmx_check_alias(op, "y", y, names[i], ins[i], 0));
  return HMX_OK;
}

hmx_status hmx_mhffn(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *w_in,
                     const hmx_tensor *w1, const hmx_tensor *w3, const hmx_tensor *w2,
                     const hmx_tensor *w_out, hmx_tensor *y) {
  static const char op[] = "mhffn";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "w1", w1, 3));
  TRY(hmx_check_float(op, "w3", w3, 3));
  TRY(hmx_check_float(op, "w2", w2, 3));
  int64_t heads = w1->shape[0], dh = w1->shape[1], f = w1->shape[2];
  TRY(check_io(op, x, w_in, w_out, y, heads, dh));
  TRY(check_positive(op, "the hidden width f", f));
  for (int i = 0; i < 3; i++) TRY(hmx_check_dim(op, "w3", w3, i, w1->shape[i], "same as w1"));
  TRY(hmx_check_dim(op, "w2", w2, 0, heads, "heads of w1"));
  TRY(hmx_check_dim(op, "w2", w2, 1, f, "hidden width f of w1"));
  TRY(hmx_check_dim(op, "w2", w2, 2, dh, "head width dh of w1"));
  const hmx_tensor *ins[] = {x, w_in, w1, w3, w2, w_out};
  static const char *const names[] = {"x", "w_in", "w1", "w3", "w2", "w_out"};
  TRY(check_no_alias(op, y, ins, names, 6));
  const hmx_tensor *place[] = {x, w_in, w1, w3, w2, w_out, y};
  static const char *const place_names[] = {"x", "w_in", "w1", "w3", "w2", "w_out", "y"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 7, 0));
  if (ex.dev) return hmx_no_device(op, &ex);
  hmx_status (*fn)(const hmx_mhffn_args *);
  HMX_PICK(ex, mhffn, fn);
  hmx_staging st;
  hmx_status s = hmx_staging_begin(&st, ins, 6, y);
  if (s == HMX_OK) {
    hmx_mhffn_args a = {st.in[0].p, st.in[1].p, st.in[2].p, st.in[3].p, st.in[4].p, st.in[5].p,
                        st.out.p, x->shape[0], x->shape[1], heads, dh, f, w_out->shape[1],
                        ex.threads};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, y, s, op, &ex);
}

hmx_status hmx_flashmhf(const hmx_context *ctx, const hmx_tensor *x, const hmx_tensor *w_in,
                        const hmx_tensor *gate, const hmx_tensor *wk, const hmx_tensor *wu,
                        const hmx_tensor *wv, const hmx_tensor *w_out, int64_t block,
                        hmx_tensor *y) {
  static const char op[] = "flashmhf";
  hmx_exec ex;
  TRY(hmx_exec_resolve(ctx, op, &ex));
  TRY(hmx_check_float(op, "gate", gate, 3));
  TRY(hmx_check_float(op, "wk", wk, 4));
  TRY(hmx_check_float(op, "wu", wu, 4));
  TRY(hmx_check_float(op, "wv", wv, 4));
  int64_t heads = gate->shape[0], dh = gate->shape[1], E = gate->shape[2], de = wk->shape[3];
  TRY(check_io(op, x, w_in, w_out, y, heads, dh));
  TRY(check_positive(op, "the number of sub-networks E", E));
  TRY(check_positive(op, "the sub-network width de", de));
  TRY(hmx_check_dim(op, "wk", wk, 0, heads, "heads of gate"));
  TRY(hmx_check_dim(op, "wk", wk, 1, E, "sub-networks E of gate"));
  TRY(hmx_check_dim(op, "wk", wk, 2, dh, "head width dh of gate"));
  for (int i = 0; i < 4; i++) TRY(hmx_check_dim(op, "wu", wu, i, wk->shape[i], "same as wk"));
  TRY(hmx_check_dim(op, "wv", wv, 0, heads, "heads of gate"));
  TRY(hmx_check_dim(op, "wv", wv, 1, E, "sub-networks E of gate"));
  TRY(hmx_check_dim(op, "wv", wv, 2, de, "sub-network width de of wk"));
  TRY(hmx_check_dim(op, "wv", wv, 3, dh, "head width dh of gate"));
  if (block < 0)
    return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "flashmhf: block must be >= 0 (got %lld)",
                    (long long)block);
  if (block == 0 || block > de) block = de < 256 ? de : 256;
  const hmx_tensor *ins[] = {x, w_in, gate, wk, wu, wv, w_out};
  static const char *const names[] = {"x", "w_in", "gate", "wk", "wu", "wv", "w_out"};
  TRY(check_no_alias(op, y, ins, names, 7));
  const hmx_tensor *place[] = {x, w_in, gate, wk, wu, wv, w_out, y};
  static const char *const place_names[] = {"x", "w_in", "gate", "wk", "wu", "wv", "w_out", "y"};
  TRY(hmx_exec_place(ctx, op, &ex, place, place_names, 8, 0));
  if (ex.dev) return hmx_no_device(op, &ex);
  hmx_status (*fn)(const hmx_flashmhf_args *);
  HMX_PICK(ex, flashmhf, fn);
  hmx_staging st;
  hmx_status s = hmx_staging_begin(&st, ins, 7, y);
  if (s == HMX_OK) {
    hmx_flashmhf_args a = {st.in[0].p, st.in[1].p, st.in[2].p, st.in[3].p, st.in[4].p,
                           st.in[5].p, st.in[6].p, st.out.p, x->shape[0], x->shape[1], heads,
                           dh, E, de, w_out->shape[1], block, ex.threads};
    s = fn(&a);
  }
  return hmx_staging_finish(&st, y, s, op, &ex);
}
