/* Backend lookup, "best available" and the HMX_BACKEND override. */
#include "backend.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int hmx_backend_count(void) { return hmx_backends_count; }

const hmx_backend *hmx_backend_at(int i) {
  return i >= 0 && i < hmx_backends_count ? hmx_backends[i] : NULL;
}

const char *hmx_backend_name(const hmx_backend *b) { return b ? b->name : "(none)"; }
const char *hmx_backend_description(const hmx_backend *b) { return b ? b->description : ""; }
int hmx_backend_available(const hmx_backend *b) { return b && b->probe && b->probe(); }

const char *hmx_backend_unavailable_reason(const hmx_backend *b) {
  if (!b || hmx_backend_available(b) || !b->unavailable_reason) return "";
  const char *r = b->unavailable_reason();
  return r ? r : "";
}

int hmx_backend_describe(const hmx_backend *b, char *buf, size_t cap) {
  if (buf && cap > 0) buf[0] = '\0';
  if (!b || !b->describe || !buf || cap == 0) return 0;
  return b->describe(buf, cap);
}

const hmx_backend *hmx_backend_best(void) {
  const hmx_backend *best = hmx_backends[0];
  for (int i = 1; i < hmx_backends_count; i++)
    if (hmx_backend_available(hmx_backends[i]) && hmx_backends[i]->priority > best->priority)
      best = hmx_backends[i];
  return best;
}

const hmx_backend *hmx_backend_find(const char *name) {
  if (!name) return NULL;
  if (strcmp(name, "best") == 0) return hmx_backend_best();
  for (int i = 0; i < hmx_backends_count; i++)
    if (strcmp(hmx_backends[i]->name, name) == 0) return hmx_backends[i];
  return NULL;
}

const hmx_backend *hmx_backend_default(void) {
  const char *env = getenv("HMX_BACKEND");
  if (!env || !*env) return hmx_backend_best();
  const hmx_backend *b = hmx_backend_find(env);
  if (!b) {
    hmx_fail(HMX_ERR_NOT_FOUND, "HMX_BACKEND=%s: no such backend (see `hmx info`)", env);
    return NULL;
  }
  if (!hmx_backend_available(b)) {
    const char *why = hmx_backend_unavailable_reason(b);
    hmx_fail(HMX_ERR_BACKEND_UNAVAILABLE, "HMX_BACKEND=%s: this machine cannot run it%s%s", env,
             *why ? ": " : "", why);
    return NULL;
  }
  return b;
}
