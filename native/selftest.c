/*
 * Loads a prebuilt binary with dlopen and exercises it, so a cross-built library can be checked under
 * qemu-user (see test-arm64.sh). Prints "fingerprint <hex> <hex>" and "estimates <sum>" for cross-checking
 * against the host build, and exits non-zero on any failed check.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "cms.h"

#define LOAD(name) \
  name##_fn name = (name##_fn)dlsym(h, #name); \
  if (!name) { fprintf(stderr, "missing symbol %s\n", #name); return 2; }

typedef uint32_t (*cms_abi_version_fn)(void);
typedef cms_t *(*cms_create_fn)(uint32_t, uint32_t, uint32_t, uint32_t);
typedef void (*cms_destroy_fn)(cms_t *);
typedef uint32_t (*cms_add_fn)(cms_t *, uint32_t, const uint8_t *, size_t, uint32_t);
typedef uint32_t (*cms_estimate_fn)(const cms_t *, const uint8_t *, size_t);
typedef void (*cms_fingerprint_fn)(const uint8_t *, size_t, uint32_t *);

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: selftest <library>\n"); return 2; }
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
  LOAD(cms_abi_version) LOAD(cms_create) LOAD(cms_destroy) LOAD(cms_add) LOAD(cms_estimate) LOAD(cms_fingerprint)
  if (cms_abi_version() != CMS_ABI_VERSION) {
    fprintf(stderr, "abi %u != source %d\n", cms_abi_version(), CMS_ABI_VERSION);
    return 1;
  }
  uint32_t fp[2];
  cms_fingerprint((const uint8_t *)"user:12345", 10, fp);
  printf("fingerprint %08x %08x\n", fp[0], fp[1]);
  cms_t *s = cms_create(1024, 4, 4, 7);
  if (!s) return 1;
  char key[32];
  unsigned long long total = 0;
  for (int round = 0; round < 3; round++)
    for (int i = 0; i < 5000; i++) {
      int n = snprintf(key, sizeof key, "k%d", i);
      cms_add(s, (uint32_t)round, (const uint8_t *)key, (size_t)n, (uint32_t)(1 + i % 3));
    }
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(key, sizeof key, "k%d", i);
    uint32_t e = cms_estimate(s, (const uint8_t *)key, (size_t)n);
    if (e < 3u * (uint32_t)(1 + i % 3)) { fprintf(stderr, "under-count for %s: %u\n", key, e); return 1; }
    total += e;
  }
  printf("estimates %llu\n", total);
  cms_destroy(s);
  return 0;
}
