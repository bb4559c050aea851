/* hmx_x86_tuning_parse (src/tuning.h): the "profile+field=value" specs that
 * tools/x86/fwht_ab.sh's variants run under. Each profile's name alone gives
 * that profile; a change sets its field and no other; a bad spec (unknown
 * profile or field, a value out of range or not an integer, a malformed
 * item) is refused with a message and leaves *out as it was. */
#include <stdio.h>
#include <string.h>

#include "tuning.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("FAIL line %d: ", __LINE__);                                                          \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static int field_index(const char *name) {
  for (int i = 0; i < hmx_x86_tuning_field_count(); i++)
    if (!strcmp(hmx_x86_tuning_field_name(i), name)) return i;
  return -1;
}

/* every field of a and b the same but the one named `except` (NULL: all) */
static int same_but(const hmx_x86_tuning *a, const hmx_x86_tuning *b, const char *except) {
  for (int i = 0; i < hmx_x86_tuning_field_count(); i++)
    if ((!except || strcmp(hmx_x86_tuning_field_name(i), except)) &&
        hmx_x86_tuning_field_get(a, i) != hmx_x86_tuning_field_get(b, i))
      return 0;
  return a->name == b->name && a->measured_on == b->measured_on;
}

static void profiles_by_name(void) {
  CHECK(hmx_x86_tuning_count() >= 4, "%d profiles", hmx_x86_tuning_count());
  for (int i = 0; i < hmx_x86_tuning_count(); i++) {
    const hmx_x86_tuning *want = hmx_x86_tuning_at(i);
    hmx_x86_tuning got;
    char err[128];
    memset(&got, 0xA5, sizeof got);
    CHECK(hmx_x86_tuning_parse(want->name, &got, err, sizeof err), "%s: %s", want->name, err);
    CHECK(same_but(&got, want, NULL), "%s: not the profile", want->name);
  }
}

static void changes(void) {
  const hmx_x86_tuning *zen = hmx_x86_tuning_find("zen"), *intel = hmx_x86_tuning_find("intel");
  hmx_x86_tuning t;
  char err[128];
  /* each field, set to a value the profile does not hold, one at a time */
  for (int i = 0; i < hmx_x86_tuning_field_count(); i++) {
    const char *name = hmx_x86_tuning_field_name(i);
    const int v = hmx_x86_tuning_field_get(zen, i) == 1 ? 0 : 1;
    char spec[128];
    snprintf(spec, sizeof spec, "zen+%s=%d", name, v);
    CHECK(hmx_x86_tuning_parse(spec, &t, err, sizeof err), "%s: %s", spec, err);
    CHECK(hmx_x86_tuning_field_get(&t, i) == v, "%s: the field is %d", spec,
          hmx_x86_tuning_field_get(&t, i));
    CHECK(same_but(&t, zen, name), "%s: another field changed", spec);
  }
  /* the per-backend arrays: _avx2 is [0], _avx512 [1] */
  CHECK(hmx_x86_tuning_parse("intel+fwht_pf_min_p_avx2=123+fwht_pf_min_p_avx512=4567", &t, err,
                             sizeof err), "%s", err);
  CHECK(t.fwht_pf_min_p[0] == 123 && t.fwht_pf_min_p[1] == 4567, "pf_min_p %d %d",
        t.fwht_pf_min_p[0], t.fwht_pf_min_p[1]);
  CHECK(hmx_x86_tuning_parse("intel+fwht_pf_mpoint_rows_avx512=0", &t, err, sizeof err), "%s", err);
  CHECK(t.fwht_pf_mpoint_rows[0] == intel->fwht_pf_mpoint_rows[0] && t.fwht_pf_mpoint_rows[1] == 0,
        "mpoint_rows %d %d", t.fwht_pf_mpoint_rows[0], t.fwht_pf_mpoint_rows[1]);
  /* fwht_mp_pad takes 0 ... 2 (never, in caches, also from memory) */
  CHECK(hmx_x86_tuning_parse("intel+fwht_mp_pad_avx512=2", &t, err, sizeof err), "%s", err);
  CHECK(t.fwht_mp_pad[0] == intel->fwht_mp_pad[0] && t.fwht_mp_pad[1] == 2, "mp_pad %d %d",
        t.fwht_mp_pad[0], t.fwht_mp_pad[1]);
  /* the last change of a field holds; the range's ends are taken */
  CHECK(hmx_x86_tuning_parse("intel+gemv_pf_lines=3+gemv_pf_lines=1073741824", &t, err, sizeof err),
        "%s", err);
  CHECK(t.gemv_pf_lines == 1 << 30, "gemv_pf_lines %d", t.gemv_pf_lines);
  CHECK(hmx_x86_tuning_parse("zen+gemv_next_kib=0", &t, NULL, 0), "no err buffer");
  CHECK(field_index("fwht_two_pass_rows") >= 0 && field_index("fwht_pf_min_p") < 0,
        "field names");
}

static void refusals(void) {
  static const char *const bad[] = {
      "",                                  /* no profile */
      "zen5",                              /* no such profile */
      "ZEN",                               /* names are exact */
      "zen ",                              /* nor padded */
      "zen+",                              /* an empty change */
      "zen++fwht_split_chunks=1",          /* an empty change between */
      "zen+fwht_split_chunks",             /* no value */
      "zen+fwht_split_chunks=",            /* an empty value */
      "zen+fwht_split_chunks=2",           /* a flag is 0 or 1 */
      "zen+fwht_split_chunks=-1",          /* negative */
      "zen+gemv_pf_lines=+1",              /* a sign */
      "zen+gemv_pf_lines= 1",              /* a blank */
      "zen+gemv_pf_lines=1x",              /* not an integer */
      "zen+gemv_pf_lines=0x10",            /* decimal only */
      "zen+gemv_pf_lines=1073741825",      /* past 2^30 */
      "zen+gemv_pf_lines=99999999999999999999999", /* past long */
      "zen+fwht_pf_min_p=1024",            /* an array needs _avx2 / _avx512 */
      "zen+fwht_mp_pad_avx2=3",            /* 0, 1 or 2 */
      "zen+name=1",                        /* not a tuning field */
      "zen+fwht_two_pass_rows=1+bogus=1",  /* a bad change after a good one */
      "=1",
      "+fwht_split_chunks=1",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    hmx_x86_tuning t, before;
    memset(&t, 0x5A, sizeof t);
    before = t;
    char err[128] = "";
    CHECK(!hmx_x86_tuning_parse(bad[i], &t, err, sizeof err), "'%s' accepted", bad[i]);
    CHECK(err[0] != '\0', "'%s': no message", bad[i]);
    CHECK(!memcmp(&t, &before, sizeof t), "'%s': *out changed", bad[i]);
    printf("  '%s': %s\n", bad[i], err);
  }
  hmx_x86_tuning t;
  char err[8];
  CHECK(!hmx_x86_tuning_parse(NULL, &t, err, sizeof err), "NULL spec accepted");
  CHECK(!hmx_x86_tuning_parse("zen", NULL, err, sizeof err), "NULL out accepted");
  /* a short message buffer is cut, never overrun (the sanitizer run checks) */
  CHECK(!hmx_x86_tuning_parse("zen+no_such_field_with_a_long_name=1", &t, err, sizeof err) &&
            strlen(err) == sizeof err - 1, "short err buffer: '%s'", err);
}

int main(void) {
  profiles_by_name();
  changes();
  refusals();
  if (failures) {
    printf("test_tuning: %d failures\n", failures);
    return 1;
  }
  printf("test_tuning: ok\n");
  return 0;
}
