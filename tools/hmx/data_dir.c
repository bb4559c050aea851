/* Where `hmx conform` finds the golden vectors when --vectors is not given.
 *
 * In this order, the first that is a directory:
 *   1. beside the executable: <dir of hmx>/HMX_DATA_FROM_BIN/vectors, the
 *      installed layout (bin/ and share/hadamix/ under one prefix). Asked of
 *      the running executable, so an installed tree moved or copied elsewhere
 *      (`cmake --install --prefix P`, a package, a tarball) still finds the
 *      vectors installed with it, of its own version;
 *   2. the source tree hmx was built from (HMX_SOURCE_DIR), for a build tree;
 *   3. the configured install location (HMX_DATA_DIR), the last resort.
 * tools/hmx.cmake sets the three macros; tests/install/check_install.cmake
 * checks 1 on a moved prefix. */
#define _XOPEN_SOURCE 700 /* realpath (XSI), readlink */
#include "hmx.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <sys/stat.h>
#include <unistd.h>
#endif
#if defined(__APPLE__)
#include <mach-o/dyld.h>
#include <stdint.h>
#endif

#ifndef HMX_SOURCE_DIR
#define HMX_SOURCE_DIR "."
#endif
#ifndef HMX_DATA_DIR
#define HMX_DATA_DIR HMX_SOURCE_DIR
#endif
#ifndef HMX_DATA_FROM_BIN
#define HMX_DATA_FROM_BIN "../share/hadamix"
#endif

enum { PATH_CAP = 4096 };

#if !defined(_WIN32)
static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The running executable's directory into buf; 0 if unknown here. */
static int exe_dir(char *buf, size_t cap) {
  size_t n = 0;
#if defined(__linux__)
  ssize_t r = readlink("/proc/self/exe", buf, cap - 1);
  if (r <= 0 || (size_t)r >= cap - 1) return 0; /* none, or maybe truncated */
  n = (size_t)r;
#elif defined(__APPLE__)
  uint32_t size = (uint32_t)cap;
  if (_NSGetExecutablePath(buf, &size) != 0) return 0;
  n = strlen(buf);
#else
  (void)cap;
  return 0; /* no portable way: steps 2 and 3 remain */
#endif
  buf[n] = 0;
  char *slash = strrchr(buf, '/');
  if (!slash) return 0;
  *slash = 0;
  return 1;
}
#endif

const char *hmx_cli_default_vectors(void) {
#if !defined(_WIN32)
  static char beside[PATH_MAX];
  char dir[PATH_CAP], joined[PATH_CAP];
  if (exe_dir(dir, sizeof dir)) {
    int w = snprintf(joined, sizeof joined, "%s/%s/vectors", dir, HMX_DATA_FROM_BIN);
    /* realpath: the messages name the folder, not bin/../share/... */
    if (w > 0 && (size_t)w < sizeof joined && is_dir(joined) && realpath(joined, beside))
      return beside;
  }
  if (!is_dir(HMX_SOURCE_DIR "/vectors")) return HMX_DATA_DIR "/vectors";
#endif
  return HMX_SOURCE_DIR "/vectors";
}
