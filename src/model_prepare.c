/* hmx_model_prepare: the float projection matrices in the G16 layout
 * (src/gemm_quant.h) for a backend that reads it in place (docs/MODEL.md,
 * "Weight layout").
 *
 * Why: one-token decode is a product of one row by each matrix, read once
 * from memory. A thread's share of an [out, in] matrix is a range of output
 * rows, which the x86 GEMV turns into 16 x 16 transposes; in G16 a group of
 * 16 outputs is one contiguous [in][16] block, read as one stream with one
 * vector load per element (tiny config, 2 threads, Zen 4: decode +4-18%,
 * docs/results/model/session10-g16). The bits do not change: G16 holds the
 * same values, and the kernels take each output's fmas in the same order
 * (§gemm), which tests/test_model_prepare.c checks.
 *
 * The conversion runs in place, group by group (16 rows of an [N, K] matrix
 * are the same bytes as their G16 group when N is a multiple of 16), so it
 * needs no second copy of the weights and keeps adjacent Q, K, V adjacent
 * (model_forward.c then still runs them as one gemm).
 *
 * The FFN's three matrices ([in, out], hmx_swiglu's layout) go to the G16
 * form of their transposes when the backend's swiglu reads that
 * (HMX_WG16_SWIGLU): decode then streams 16 hidden units' (or outputs')
 * weights as one block, and prefill reads each group's block in place as a
 * tile's panel (src/swiglu_quant.c runs them). A transpose is not local to a group, so
 * each matrix goes through one scratch copy of itself.
 *
 * 16-bit FFNs also go to G16 for a backend whose swiglu reads neither G16
 * nor 16-bit weights but whose gemm reads G16 (neon): its swiglu would get
 * them widened to f32 by the dispatcher on every call, where
 * hmx_swiglu_quant's composition (gemm, gate, gemm: §swiglu's operations,
 * the same bits) reads them in place. An f32 FFN stays in rows there: that
 * swiglu reads f32 rows as they are. */
#include "model_internal.h"
#include "backend.h"
#include "dispatch.h"
#include "gguf.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* The projections, by name: [out, in] matrices that go through project()
 * (the FFN's W1, W3, W2 are in hmx_swiglu's [in, out] layout: see
 * prepare_ffn). */
static int is_projection(const char *name) {
  static const char *const suffix[] = {"attn.wq", "attn.wk", "attn.wv", "attn.wo"};
  const size_t len = strlen(name);
  if (strcmp(name, "tok_emb") == 0 || strcmp(name, "lm_head") == 0) return 1;
  for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
    const size_t sl = strlen(suffix[i]);
    if (len > sl && strcmp(name + len - sl, suffix[i]) == 0) return 1;
  }
  return 0;
}

/* Whether w's bytes lie inside the model's own (writable) memory. Compared
 * as integers: relational operators on pointers into different objects are
 * undefined in C. */
static int owned(const hmx_model *m, const hmx_tensor *w, size_t bytes) {
  const uintptr_t a = (uintptr_t)m->arena, p = (uintptr_t)w->data;
  return m->arena && p >= a && p - a <= m->arena_bytes && bytes <= m->arena_bytes - (p - a);
}

/* [n, k] rows of ggml type `type` at data (element size es, n a multiple of
 * 16) -> G16 in place: each group of 16 rows is copied to tmp (16 k es
 * bytes) and regrouped back into its own bytes by hmx_qlayout_to_g16. */
static void rows_to_g16_in_place(uint32_t type, unsigned char *data, int64_t n, int64_t k,
                                 size_t es, unsigned char *tmp) {
  const size_t gbytes = (size_t)(HMX_QG * k) * es;
  for (int64_t g = 0; g < n / HMX_QG; g++) {
    unsigned char *grp = data + (size_t)g * gbytes;
    memcpy(tmp, grp, gbytes);
    hmx_qlayout_to_g16(type, tmp, HMX_QG, k, grp);
  }
}

/* Whether matrix i may be rewritten: a float tensor not yet rewritten,
 * contiguous, in memory the model may write. */
static int rewritable(const hmx_model *m, int i) {
  const hmx_tensor *w = &m->weights[i];
  if ((m->q && m->q[i].data) || !w->data || m->specs[i].ndim != 2) return 0;
  if (w->dtype != HMX_F32 && w->dtype != HMX_BF16 && w->dtype != HMX_F16) return 0;
  const size_t bytes = (size_t)(w->shape[0] * w->shape[1]) * hmx_dtype_size(w->dtype);
  return hmx_tensor_is_contiguous(w) && w->memory == HMX_MEMORY_HOST && owned(m, w, bytes);
}

/* The projections (is_projection, out a multiple of 16: else G16 needs
 * padding rows, more bytes than in place), in place one group of 16 rows at
 * a time. Returns the matrices rewritten, or -1 when out of memory. */
static int prepare_projections(hmx_model *m) {
  int64_t kmax = 0;
  for (int i = 0; i < m->n_weights; i++)
    if (m->specs[i].ndim == 2 && m->weights[i].shape[1] > kmax) kmax = m->weights[i].shape[1];
  unsigned char *tmp = malloc((size_t)(HMX_QG * kmax) * sizeof(float));
  if (!tmp) return -1;
  int n_changed = 0;
  for (int i = 0; i < m->n_weights; i++) {
    hmx_tensor *w = &m->weights[i];
    if (!is_projection(m->specs[i].name) || !rewritable(m, i) || w->shape[0] % HMX_QG) continue;
    const int64_t n = w->shape[0], k = w->shape[1];
    const uint32_t type = hmx_dtype_qtype(w->dtype);
    rows_to_g16_in_place(type, (unsigned char *)(uintptr_t)w->data, n, k, hmx_dtype_size(w->dtype),
                         tmp);
    m->q[i] = (hmx_qmatrix){type, w->data, n, k, HMX_QLAYOUT_G16, NULL};
    w->data = NULL; /* the G16 matrix has no tensor view (hmx_model_weight: NULL) */
    n_changed++;
  }
  free(tmp);
  return n_changed;
}

/* Whether layer l's W1, W3, W2 may all be rewritten: one float dtype (with
 * only16, bf16 or f16), h and d_out multiples of 16 (the forward runs a
 * layer's FFN from one layout, so all three or none). */
static int ffn_rewritable(const hmx_model *m, int l, int only16, int idx[3]) {
  const hmx_layer_weights *L = &m->layers[l];
  idx[0] = (int)(L->w1 - m->weights);
  idx[1] = (int)(L->w3 - m->weights);
  idx[2] = (int)(L->w2 - m->weights);
  if (only16 && L->w1->dtype == HMX_F32) return 0;
  for (int j = 0; j < 3; j++) {
    const hmx_tensor *w = &m->weights[idx[j]];
    if (!rewritable(m, idx[j]) || w->dtype != L->w1->dtype || w->shape[1] % HMX_QG) return 0;
  }
  return 1;
}

/* Each layer's W1, W3 ([d, h]) and W2 ([h, d_out]) in place to the G16 form
 * of W^T (with only16, the layers whose FFN is bf16 or f16), each through
 * one scratch copy (room for the largest). Returns the matrices rewritten,
 * or -1 when out of memory. */
static int prepare_ffn(hmx_model *m, int only16) {
  size_t most = 0;
  int idx[3];
  for (int l = 0; l < m->cfg.n_layer; l++) {
    if (!ffn_rewritable(m, l, only16, idx)) continue;
    for (int j = 0; j < 3; j++) {
      const hmx_tensor *w = &m->weights[idx[j]];
      const size_t b = (size_t)(w->shape[0] * w->shape[1]) * hmx_dtype_size(w->dtype);
      if (b > most) most = b;
    }
  }
  if (!most) return 0; /* nothing to rewrite (e.g. a GGUF file's FFN, kept as it is) */
  unsigned char *tmp = malloc(most);
  if (!tmp) return -1;
  int n_changed = 0;
  for (int l = 0; l < m->cfg.n_layer; l++) {
    if (!ffn_rewritable(m, l, only16, idx)) continue;
    for (int j = 0; j < 3; j++) {
      hmx_tensor *w = &m->weights[idx[j]];
      const int64_t k = w->shape[0], n = w->shape[1]; /* [in, out] */
      const uint32_t type = hmx_dtype_qtype(w->dtype);
      memcpy(tmp, w->data, (size_t)(k * n) * hmx_dtype_size(w->dtype));
      hmx_qlayout_cols_to_g16(type, tmp, k, n, (void *)(uintptr_t)w->data);
      m->q[idx[j]] = (hmx_qmatrix){type, w->data, n, k, HMX_QLAYOUT_G16, NULL};
      w->data = NULL;
      n_changed++;
    }
  }
  free(tmp);
  return n_changed;
}

/* Bytes of kept matrix q (padding rows of G16 included). */
static size_t kept_bytes(const hmx_qmatrix *q) {
  return hmx_qlayout_bytes(q->type, q->layout, q->n, q->k);
}

/* Whether weight i is a kept matrix that the forward pass reads by gemm:
 * every one but an untied embedding (read a row at a time on the host). */
static int read_by_gemm(const hmx_model *m, int i) {
  const hmx_qmatrix *q = &m->q[i];
  /* plain float matrices are read from host memory (hmx_gemm_quant); none
   * is kept so today (prepare and GGUF loads use G16) */
  if (!q->data || hmx_qmatrix_is_plain(q)) return 0;
  return &m->weights[i] != m->tok_emb || m->lm_head == m->tok_emb;
}

/* Bytes of vector weight i (a norm's weight, alpha, beta) when the forward
 * pass on the GPU needs a copy of it, else 0. */
static size_t vector_bytes(const hmx_model *m, int i) {
  const hmx_tensor *w = &m->weights[i];
  if (m->specs[i].ndim != 1 || !w->data || w->memory != HMX_MEMORY_HOST ||
      !hmx_tensor_is_contiguous(w))
    return 0;
  return (size_t)w->shape[0] * hmx_dtype_size(w->dtype);
}

/* Whether every weight the forward pass reads lies on the GPU: each matrix
 * it reads by gemm (all but an untied embedding, which is read a row at a
 * time on the host) and each vector. model_forward.c then keeps the whole
 * pass there. */
static int all_on_gpu(const hmx_model *m) {
  for (int i = 0; i < m->n_weights; i++) {
    if (m->specs[i].ndim == 1) {
      if (!m->vdev[i]) return 0;
    } else if (&m->weights[i] != m->tok_emb || m->lm_head == m->tok_emb) {
      if (!read_by_gemm(m, i) || !m->q[i].dev) return 0;
    }
  }
  return 1;
}

/* The weights that the forward pass reads on the GPU, copied to the GPU of
 * a backend with device kernels (d): the kept matrices read by gemm, whose
 * host calls then read the copy (hmx_qmatrix.dev) and no longer send the
 * matrix over PCIe on every call (docs/MODEL.md "Weights on the GPU"), and
 * the vectors (norm weights, alpha, beta: m->vdev), which with the matrices
 * let the whole forward pass run on the GPU (model_forward.c). One
 * allocation, the matrices in the order of their host addresses; matrices
 * adjacent on the host stay adjacent (model_forward.c runs adjacent Q, K, V
 * as one gemm of one matrix), others start at 256-byte boundaries, and so
 * do the vectors, after them. The host bytes stay: the embedding rows and
 * every other backend read them. When the GPU lacks the memory the model
 * keeps working from host memory as before (HMX_OK, no copies). */
static hmx_status upload_kept(hmx_model *m, const hmx_device_ops *d) {
  if (m->dev_weights || !m->q) return HMX_OK;
  int *order = malloc((size_t)m->n_weights * sizeof *order);
  size_t *off = malloc((size_t)m->n_weights * sizeof *off);
  const void **vdev = calloc((size_t)m->n_weights, sizeof *vdev);
  if (!order || !off || !vdev) {
    free(order), free(off), free(vdev);
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_model_prepare: out of memory");
  }
  int n = 0;
  for (int i = 0; i < m->n_weights; i++)
    if (read_by_gemm(m, i)) order[n++] = i;
  /* by host address (insertion sort: a few hundred matrices at most) */
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0 && (uintptr_t)m->q[order[b]].data < (uintptr_t)m->q[order[b - 1]].data;
         b--) {
      const int t = order[b];
      order[b] = order[b - 1], order[b - 1] = t;
    }
  size_t total = 0;
  for (int a = 0; a < n; a++) {
    const hmx_qmatrix *q = &m->q[order[a]], *p = a ? &m->q[order[a - 1]] : NULL;
    const int adjacent = p && (uintptr_t)p->data + kept_bytes(p) == (uintptr_t)q->data;
    off[a] = adjacent ? total : (total + 255) / 256 * 256;
    total = off[a] + kept_bytes(q);
  }
  const int n_mat = n;
  /* vectors only with matrices: alone they serve nothing (no GPU pass) */
  for (int i = 0; i < m->n_weights && n_mat > 0; i++)
    if (vector_bytes(m, i)) {
      order[n] = i;
      off[n] = (total + 255) / 256 * 256;
      total = off[n++] + vector_bytes(m, i);
    }
  void *base = NULL;
  hmx_status st = n ? d->resident_alloc(&base, total) : HMX_OK;
  if (st == HMX_ERR_NO_MEMORY) {
    hmx_clear_error(); /* not an error: the host copies serve */
    st = HMX_OK;
  }
  for (int a = 0; a < n && base && !st; a++) {
    const int i = order[a];
    st = a < n_mat ? d->upload((char *)base + off[a], m->q[i].data, kept_bytes(&m->q[i]))
                   : d->upload((char *)base + off[a], m->weights[i].data, vector_bytes(m, i));
  }
  if (!st && base) {
    for (int a = 0; a < n; a++) {
      if (a < n_mat) m->q[order[a]].dev = (char *)base + off[a];
      else vdev[order[a]] = (char *)base + off[a];
    }
    m->dev_weights = base;
    m->dev_free = d->resident_free;
    m->vdev = vdev;
    vdev = NULL;
    m->dev_forward = all_on_gpu(m);
  } else if (base) {
    d->resident_free(base);
  }
  free(order), free(off), free(vdev);
  return st;
}

/* Whether an op resolved to ex reads weights in the layout `bit` (HMX_WG16_*)
 * from host memory: any other backend would convert back on every call,
 * and the fast tier keeps the rows (its kernels take f32 rows). */
static int reads_g16(const hmx_exec *ex, unsigned bit) {
  return !ex->dev && ex->tier == HMX_TIER_EXACT && (ex->be->weights16 & bit);
}

hmx_status hmx_model_prepare(hmx_model *m, const hmx_context *ctx, int *changed) {
  hmx_clear_error();
  if (changed) *changed = 0;
  if (!m) return hmx_fail(HMX_ERR_INVALID_ARGUMENT, "hmx_model_prepare: model is NULL");
  hmx_exec gemm, swiglu;
  hmx_status st = hmx_exec_resolve(ctx, "gemm", &gemm);
  if (st || (st = hmx_exec_resolve(ctx, "swiglu", &swiglu))) return st;
  const int proj = reads_g16(&gemm, HMX_WG16_GEMM) && gemm.be->gemm;
  const int ffn = reads_g16(&swiglu, HMX_WG16_SWIGLU) && swiglu.be->swiglu;
  /* a backend with device kernels whose host calls will read the kept
   * matrices from GPU copies (upload_kept) */
  const hmx_device_ops *dev =
      gemm.be->gemm && hmx_exec_reads_gpu_copies(&gemm) ? hmx_device_ops_of(gemm.be) : NULL;
  /* FFNs to G16 for hmx_swiglu_quant: 16-bit ones where the swiglu would
   * get them widened per call (its composition of in-place G16 gemms: see
   * the top); every one where they get GPU copies, which hmx_swiglu_quant
   * hands to the backend's swiglu (a swiglu on host tensors copies its
   * weights every call) */
  const int ffn16 = !ffn && proj && !dev && !swiglu.dev && swiglu.tier == HMX_TIER_EXACT &&
                    !(swiglu.be->weights16 & (HMX_WG16_SWIGLU | HMX_W16_SWIGLU));
  const int ffn_dev = !ffn && proj && dev;
  if (!proj && !ffn && !ffn16 && !dev) return HMX_OK;
  if (!m->q && !(m->q = calloc((size_t)m->n_weights, sizeof *m->q)))
    return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_model_prepare: out of memory");
  const int a = proj ? prepare_projections(m) : 0;
  const int b = a >= 0 && (ffn || ffn16 || ffn_dev) ? prepare_ffn(m, ffn16) : 0;
  if (a < 0 || b < 0) return hmx_fail(HMX_ERR_NO_MEMORY, "hmx_model_prepare: out of memory");
  if (changed) *changed = a + b;
  return dev ? upload_kept(m, dev) : HMX_OK;
}
