/* A decode step's time op by op, through the forward pass's trace callback:
 * the time since the previous callback is charged to the tensor just
 * produced (so "q" is the fused Q/K/V product, "attn" the attention over the
 * KV cache), to one of a few variants (the tools that interleave variants
 * step by step). Shared by tools/bench_decode_ops.c and
 * tools/x86/decode_next_ab.c. Header only, after tool_clock.h. */
#ifndef HMX_TOOLS_OP_TIMES_H
#define HMX_TOOLS_OP_TIMES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define HMX_OP_TENSORS 32
#define HMX_OP_VARIANTS 6

typedef struct hmx_op_times {
  char name[HMX_OP_TENSORS][32];
  double sec[HMX_OP_VARIANTS][HMX_OP_TENSORS]; /* seconds by variant and tensor */
  int n;       /* tensors seen */
  int on;      /* charge time (else only note when the callback ran) */
  int variant; /* the variant the time goes to */
  double last; /* the previous callback's time */
} hmx_op_times;

/* The trace callback (hmx_trace_fn) for an hmx_op_times as user data. */
static inline int hmx_op_times_trace(void *user, int layer, const char *tensor, const float *data,
                                     int64_t rows, int64_t cols) {
  hmx_op_times *t = user;
  (void)layer, (void)data, (void)rows, (void)cols;
  const double x = hmx_tool_seconds();
  if (t->on) {
    int i = 0;
    while (i < t->n && strcmp(t->name[i], tensor) != 0) i++;
    if (i == t->n && t->n < HMX_OP_TENSORS) snprintf(t->name[t->n++], sizeof t->name[0], "%s", tensor);
    if (i < t->n) t->sec[t->variant][i] += x - t->last;
  }
  t->last = x;
  return 0;
}

#endif
