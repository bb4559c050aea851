/* The harness of the argument-validation oracles (oracle_args.c,
 * oracle_args_ext.c): EXPECT(status, call) runs a call against a
 * sentinel-filled output buffer and checks the status, that a failure leaves
 * a message, and that a failing call writes nothing. Included once per test
 * program (it defines the buffer and the counter). */
#ifndef HMX_ORACLE_EXPECT_H
#define HMX_ORACLE_EXPECT_H

#include "oracle.h"

static float out_buf[4096];
static const float SENTINEL = 123.25f;

static void arm(void) {
  for (size_t i = 0; i < sizeof out_buf / sizeof *out_buf; i++) out_buf[i] = SENTINEL;
}

static int untouched(void) {
  for (size_t i = 0; i < sizeof out_buf / sizeof *out_buf; i++)
    if (out_buf[i] != SENTINEL) return 0;
  return 1;
}

static int n_cases = 0;

#define EXPECT(want, call)                                                                     \
  do {                                                                                         \
    arm();                                                                                     \
    hmx_status got_ = (call);                                                                  \
    n_cases++;                                                                                 \
    CHECK(got_ == (want), "%s: got %s, want %s (%s)", #call, hmx_status_string(got_),          \
          hmx_status_string(want), hmx_last_error());                                          \
    CHECK(got_ == HMX_OK || hmx_last_error()[0] != '\0', "%s: empty hmx_last_error()", #call); \
    CHECK(got_ == HMX_OK || untouched(), "%s: output written by a failing call", #call);       \
    if (got_ != HMX_OK) printf("  %-24s %-18s \"%s\"\n", #want, "", hmx_last_error());          \
  } while (0)

#endif
