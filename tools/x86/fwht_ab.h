/* The variants that tools/x86/fwht_ab.sh compiles and lists in its generated
 * table (ab_table.c), for tools/x86/fwht_ab.c: the first is the base. */
#ifndef HMX_TOOLS_X86_FWHT_AB_H
#define HMX_TOOLS_X86_FWHT_AB_H

#include "backend.h"

typedef struct ab_variant {
  const char *name;
  hmx_status (*fn)(const hmx_fwht_args *a); /* simd/<isa>/fwht_<isa>.c under its flags */
  const char *tuning; /* "name@spec" in VARIANTS: the tuning profile it runs under
                         (src/tuning.h, hmx_x86_tuning_parse), else NULL: the CPU's */
} ab_variant;
extern const ab_variant ab_variants[];
extern const int ab_nvariants;

#endif
