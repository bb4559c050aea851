/* Fixture helper for the CLI tests (tests/cli/ scripts). Not a test by itself:
 * the scripts call it to write files that CMake cannot write (binary), and to
 * mutate a golden vector so that `hmx conform` must fail on it.
 *
 *   test_conform_detects vector PATH        a small valid exact-tier rmsnorm vector
 *                                           (inputs and expected output from ref)
 *   test_conform_detects bad KIND PATH      a broken input file for `hmx run rmsnorm`:
 *       missing_weight  no 'weight' tensor
 *       wrong_rank      'x' of rank 3
 *       unknown_tensor  an extra tensor 'bogus'
 *       bad_param       metadata param.eps = "nan"
 *       unknown_param   metadata param.frob = "1"
 *       no_op           a valid rmsnorm vector without "op" metadata
 *       unknown_op      "op" = "frobnicate"
 *       no_expected     a vector without its expected output 'y'
 *       truncated       the valid vector with its last 5 bytes cut off
 *       int_dtype       'x' stored as i32
 *   test_conform_detects mutate SRC DST     copy SRC to DST with one bit of the first
 *                                           output flipped (first non-NaN element)
 *   test_conform_detects same-outputs OUT VEC
 *                                           exit 0 iff every tensor of OUT has the same
 *                                           dtype, shape and bytes in VEC, and OUT's "op"
 *                                           and "param.*" metadata match VEC's
 */
#include "hadamix.h"
#include "opspec.h"
#include "safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, hmx_status s) {
  fprintf(stderr, "test_conform_detects: %s: %s (%s)\n", what, hmx_status_string(s),
          hmx_last_error());
  return 1;
}

/* ---------------------------------------------------------------- a small vector */

enum { ROWS = 3, N = 8 };

typedef struct fixture {
  float x[ROWS * N], w[N], y[ROWS * N];
} fixture;

static hmx_status make_fixture(fixture *fx) {
  for (int i = 0; i < ROWS * N; i++) fx->x[i] = (float)((i * 37) % 23) * 0.125f - 1.375f;
  for (int i = 0; i < N; i++) fx->w[i] = 0.5f + 0.0625f * (float)i;
  hmx_tensor x = hmx_tensor_2d(fx->x, HMX_F32, ROWS, N);
  hmx_tensor w = hmx_tensor_1d(fx->w, HMX_F32, N);
  hmx_tensor y = hmx_tensor_2d(fx->y, HMX_F32, ROWS, N);
  hmx_context ctx = {hmx_backend_find("ref"), 0, 0, HMX_TIER_DEFAULT};
  return hmx_rmsnorm(&ctx, &x, &w, 1e-5f, &y);
}

static hmx_status write_vector(const char *path, const char *kind) {
  fixture fx;
  hmx_status s = make_fixture(&fx);
  if (s != HMX_OK) return s;
  hmx_st_writer *w = hmx_st_writer_new();
  if (!w) return HMX_ERR_NO_MEMORY;
  hmx_tensor x = hmx_tensor_2d(fx.x, HMX_F32, ROWS, N);
  hmx_tensor x3 = hmx_tensor_3d(fx.x, HMX_F32, 1, ROWS, N);
  hmx_tensor xi = hmx_tensor_2d(fx.x, HMX_I32, ROWS, N);
  hmx_tensor wt = hmx_tensor_1d(fx.w, HMX_F32, N);
  hmx_tensor y = hmx_tensor_2d(fx.y, HMX_F32, ROWS, N);
  const char *op = strcmp(kind, "unknown_op") == 0 ? "frobnicate" : "rmsnorm";
  const char *eps = strcmp(kind, "bad_param") == 0 ? "nan" : "9.99999975e-06";

  if (strcmp(kind, "wrong_rank") == 0) s = hmx_st_writer_add(w, "x", &x3);
  else if (strcmp(kind, "int_dtype") == 0) s = hmx_st_writer_add(w, "x", &xi);
  else s = hmx_st_writer_add(w, "x", &x);
  if (s == HMX_OK && strcmp(kind, "missing_weight") != 0) s = hmx_st_writer_add(w, "weight", &wt);
  if (s == HMX_OK && strcmp(kind, "no_expected") != 0) s = hmx_st_writer_add(w, "y", &y);
  if (s == HMX_OK && strcmp(kind, "unknown_tensor") == 0) s = hmx_st_writer_add(w, "bogus", &wt);
  if (s == HMX_OK && strcmp(kind, "no_op") != 0) s = hmx_st_writer_meta(w, "op", op);
  if (s == HMX_OK) s = hmx_st_writer_meta(w, "tier", "exact");
  if (s == HMX_OK) s = hmx_st_writer_meta(w, "case", "cli_fixture");
  if (s == HMX_OK) s = hmx_st_writer_meta(w, "param.eps", eps);
  if (s == HMX_OK && strcmp(kind, "unknown_param") == 0)
    s = hmx_st_writer_meta(w, "param.frob", "1");

  if (s == HMX_OK && strcmp(kind, "truncated") == 0) {
    void *buf = NULL;
    size_t len = 0;
    s = hmx_st_writer_bytes(w, &buf, &len);
    if (s == HMX_OK) {
      FILE *fp = fopen(path, "wb");
      if (!fp || fwrite(buf, 1, len - 5, fp) != len - 5) s = HMX_ERR_IO;
      if (fp && fclose(fp) != 0) s = HMX_ERR_IO;
    }
    free(buf);
  } else if (s == HMX_OK) {
    s = hmx_st_writer_save(w, path);
  }
  hmx_st_writer_free(w);
  return s;
}

/* ---------------------------------------------------------------- mutate */

static int is_nan_at(const hmx_st_tensor *t, const unsigned char *p) {
  uint32_t u;
  uint16_t h;
  switch (t->dtype) {
  case HMX_F32: memcpy(&u, p, 4); return (u & 0x7fffffffu) > 0x7f800000u;
  case HMX_BF16: memcpy(&h, p, 2); return (h & 0x7fffu) > 0x7f80u;
  case HMX_F16: memcpy(&h, p, 2); return (h & 0x7fffu) > 0x7c00u;
  default: return 0;
  }
}

static int mutate(const char *src, const char *dst) {
  hmx_st_file *f = NULL;
  hmx_status s = hmx_st_load(src, &f);
  if (s != HMX_OK) return fail(src, s);
  const char *opname = hmx_st_meta(f, "op");
  const hmx_opspec *op = opname ? hmx_op_find(opname) : NULL;
  if (!op) {
    fprintf(stderr, "test_conform_detects: %s: no known \"op\" metadata\n", src);
    hmx_st_free(f);
    return 1;
  }
  const char *outname = NULL;
  for (int a = 0; a < op->nargs && !outname; a++)
    if (op->args[a].is_output) outname = op->args[a].name;

  hmx_st_writer *w = hmx_st_writer_new();
  int flipped = 0;
  s = w ? HMX_OK : HMX_ERR_NO_MEMORY;
  for (int i = 0; s == HMX_OK && i < hmx_st_count(f); i++) {
    const hmx_st_tensor *t = hmx_st_at(f, i);
    unsigned char *copy = malloc(t->nbytes ? t->nbytes : 1);
    if (!copy) {
      s = HMX_ERR_NO_MEMORY;
      break;
    }
    if (t->nbytes) memcpy(copy, t->data, t->nbytes);
    size_t es = hmx_dtype_size(t->dtype);
    if (!flipped && outname && strcmp(t->name, outname) == 0 && es) {
      for (uint64_t k = 0; k + es <= t->nbytes; k += es)
        if (!is_nan_at(t, copy + k)) {
          copy[k] ^= 1u; /* lowest mantissa bit (safetensors data is little-endian) */
          flipped = 1;
          printf("flipped the lowest bit of %s[%llu] in %s\n", t->name,
                 (unsigned long long)(k / es), dst);
          break;
        }
    }
    hmx_tensor v = hmx_tensor_make(copy, t->dtype, t->ndim, t->shape);
    s = hmx_st_writer_add(w, t->name, &v);
    free(copy);
  }
  for (int i = 0; s == HMX_OK && i < hmx_st_meta_count(f); i++) {
    const char *value;
    const char *key = hmx_st_meta_at(f, i, &value);
    s = hmx_st_writer_meta(w, key, value);
  }
  if (s == HMX_OK && !flipped) {
    fprintf(stderr, "test_conform_detects: %s: no non-NaN element in output '%s'\n", src,
            outname ? outname : "?");
    s = HMX_ERR_NOT_FOUND;
  }
  if (s == HMX_OK) s = hmx_st_writer_save(w, dst);
  hmx_st_writer_free(w);
  hmx_st_free(f);
  return s == HMX_OK ? 0 : fail(dst, s);
}

/* ---------------------------------------------------------------- same-outputs */

static int same_outputs(const char *outp, const char *vecp) {
  hmx_st_file *o = NULL, *v = NULL;
  hmx_status s = hmx_st_load(outp, &o);
  if (s != HMX_OK) return fail(outp, s);
  s = hmx_st_load(vecp, &v);
  if (s != HMX_OK) {
    hmx_st_free(o);
    return fail(vecp, s);
  }
  int bad = 0;
  if (hmx_st_count(o) == 0) {
    fprintf(stderr, "%s: no tensors\n", outp);
    bad = 1;
  }
  for (int i = 0; i < hmx_st_count(o); i++) {
    const hmx_st_tensor *a = hmx_st_at(o, i);
    const hmx_st_tensor *b = hmx_st_find(v, a->name);
    if (!b) {
      fprintf(stderr, "%s: tensor '%s' is not in %s\n", outp, a->name, vecp);
      bad = 1;
      continue;
    }
    int same = a->dtype == b->dtype && a->ndim == b->ndim && a->nbytes == b->nbytes;
    for (int d = 0; same && d < a->ndim; d++) same = a->shape[d] == b->shape[d];
    if (same && a->nbytes) same = memcmp(a->data, b->data, (size_t)a->nbytes) == 0;
    if (!same) {
      fprintf(stderr, "%s: tensor '%s' differs from %s\n", outp, a->name, vecp);
      bad = 1;
    } else {
      printf("tensor '%s': same dtype, shape and bytes\n", a->name);
    }
  }
  const char *oo = hmx_st_meta(o, "op"), *vo = hmx_st_meta(v, "op");
  if (!oo || !vo || strcmp(oo, vo) != 0) {
    fprintf(stderr, "\"op\" metadata differs: '%s' vs '%s'\n", oo ? oo : "(none)",
            vo ? vo : "(none)");
    bad = 1;
  }
  for (int i = 0; i < hmx_st_meta_count(v); i++) {
    const char *value;
    const char *key = hmx_st_meta_at(v, i, &value);
    if (strncmp(key, "param.", 6) != 0) continue;
    const char *ov = hmx_st_meta(o, key);
    if (!ov || strcmp(ov, value) != 0) {
      fprintf(stderr, "metadata %s: '%s' in %s, '%s' in %s\n", key, ov ? ov : "(none)", outp,
              value, vecp);
      bad = 1;
    }
  }
  hmx_st_free(o);
  hmx_st_free(v);
  return bad;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "vector") == 0) {
    hmx_status s = write_vector(argv[2], "valid");
    return s == HMX_OK ? 0 : fail(argv[2], s);
  }
  if (argc == 4 && strcmp(argv[1], "bad") == 0) {
    static const char *const kinds[] = {"missing_weight", "wrong_rank", "unknown_tensor",
                                        "bad_param", "unknown_param", "no_op", "unknown_op",
                                        "no_expected", "truncated", "int_dtype"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
      if (strcmp(argv[2], kinds[i]) == 0) {
        hmx_status s = write_vector(argv[3], argv[2]);
        return s == HMX_OK ? 0 : fail(argv[3], s);
      }
    fprintf(stderr, "test_conform_detects: unknown kind '%s'\n", argv[2]);
    return 2;
  }
  if (argc == 4 && strcmp(argv[1], "mutate") == 0) return mutate(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "same-outputs") == 0) return same_outputs(argv[2], argv[3]);
  fprintf(stderr, "usage: test_conform_detects vector PATH | bad KIND PATH | mutate SRC DST | "
                  "same-outputs OUT VEC\n");
  return 2;
}
