/* Runs LLVMFuzzerTestOneInput (tests/fuzz/fuzz_safetensors.c, fuzz_gguf.c)
 * over files and directories given on the command line, without libFuzzer, so
 * that the fuzz entry point and its properties are exercised by every normal
 * test run.
 *
 *   fuzz_safetensors_replay DIR_OR_FILE...   (and fuzz_gguf_replay)
 *
 * Seed files named ok_* must be accepted by the target's parser
 * (fuzz_parse_status, defined next to each target) and files named bad_*
 * rejected; other names (e.g. crash-* artifacts) are only replayed.
 * Fails if no input at all was found. Directories are read on POSIX systems
 * only; elsewhere pass the files. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif

#include "hadamix.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(_WIN32)
#include <dirent.h>
#include <sys/stat.h>
#define REPLAY_HAVE_DIRS 1
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The target's parser on one input (parse and free): HMX_OK when accepted. */
hmx_status fuzz_parse_status(const uint8_t *data, size_t size);

static int n_inputs = 0, n_failures = 0;

static unsigned char *read_file(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  size_t cap = 4096, n = 0;
  unsigned char *b = malloc(cap);
  while (b) {
    n += fread(b + n, 1, cap - n, fp);
    if (n < cap) break;
    unsigned char *nb = realloc(b, cap * 2);
    if (!nb) {
      free(b);
      b = NULL;
      break;
    }
    b = nb;
    cap *= 2;
  }
  int err = ferror(fp);
  fclose(fp);
  if (err) {
    free(b);
    return NULL;
  }
  *len = n;
  return b;
}

static const char *base_name(const char *path) {
  const char *s = path;
  for (const char *p = path; *p; p++)
    if (*p == '/' || *p == '\\') s = p + 1;
  return s;
}

static void replay_file(const char *path) {
  size_t len = 0;
  unsigned char *b = read_file(path, &len);
  if (!b) {
    fprintf(stderr, "%s: cannot read\n", path);
    n_failures++;
    return;
  }
  n_inputs++;
  const char *name = base_name(path);
  int expect_ok = strncmp(name, "ok_", 3) == 0, expect_bad = strncmp(name, "bad_", 4) == 0;
  if (expect_ok || expect_bad) {
    hmx_status s = fuzz_parse_status(b, len);
    if (expect_ok && s != HMX_OK) {
      fprintf(stderr, "%s: expected to be accepted, got %s: %s\n", path, hmx_status_string(s),
              hmx_last_error());
      n_failures++;
    } else if (expect_bad && s == HMX_OK) {
      fprintf(stderr, "%s: expected to be rejected, was accepted\n", path);
      n_failures++;
    } else {
      printf("  %-40s %s%s%s\n", name, hmx_status_string(s), s == HMX_OK ? "" : ": ",
             s == HMX_OK ? "" : hmx_last_error());
    }
  }
  /* an abort() here is a property violation found by the fuzz target */
  LLVMFuzzerTestOneInput(b, len);
  free(b);
}

#ifdef REPLAY_HAVE_DIRS
static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "%s: cannot open directory\n", dir);
    n_failures++;
    return;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue; /* ., .., hidden files */
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      char **nn = realloc(names, ncap * sizeof *nn);
      if (!nn) break;
      names = nn;
      cap = ncap;
    }
    size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
    names[n] = malloc(len);
    if (!names[n]) break;
    snprintf(names[n], len, "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  if (n > 1) qsort(names, n, sizeof *names, cmp_str); /* deterministic order */
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) replay_file(names[i]);
    free(names[i]);
  }
  free(names);
}
#endif

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
#ifdef REPLAY_HAVE_DIRS
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      replay_dir(argv[i]);
      continue;
    }
#endif
    replay_file(argv[i]);
  }
  printf("%s: %d inputs, %d failures\n", argc ? base_name(argv[0]) : "fuzz_replay", n_inputs,
         n_failures);
  if (n_inputs == 0) {
    fprintf(stderr, "no inputs found\n");
    return 1;
  }
  return n_failures ? 1 : 0;
}
