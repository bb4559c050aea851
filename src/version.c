/* hmx_version_string: the version this library was built with. */
#include "hadamix.h"

#define HMX_STR_(x) #x
#define HMX_STR(x) HMX_STR_(x)

const char *hmx_version_string(void) {
  return HMX_STR(HMX_VERSION_MAJOR) "." HMX_STR(HMX_VERSION_MINOR) "." HMX_STR(HMX_VERSION_PATCH);
}
