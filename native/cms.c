#include "cms.h"

#include <stdlib.h>
#include <string.h>

struct cms {
  uint32_t width;
  uint32_t depth;
  uint32_t slots;
  uint32_t seed;
  uint32_t *counters;
  size_t ncounters;
  /* depth multipliers (odd) then depth offsets */
  uint32_t row[];
};

#define CMS_MAX_BYTES ((size_t)1 << 31)
#define CMS_SAT UINT32_C(0xFFFFFFFF)

static uint32_t rotl32(uint32_t x, unsigned r) { return (x << r) | (x >> (32u - r)); }

static uint32_t fmix32(uint32_t h) {
  h ^= h >> 16;
  h *= UINT32_C(0x85ebca6b);
  h ^= h >> 13;
  h *= UINT32_C(0xc2b2ae35);
  h ^= h >> 16;
  return h;
}

/* splitmix32-style generator: the per-row parameters only need to be distinct and well spread. */
static uint32_t next_param(uint32_t *state) {
  uint32_t z = (*state += UINT32_C(0x9e3779b9));
  z = (z ^ (z >> 16)) * UINT32_C(0x21f0aaad);
  z = (z ^ (z >> 15)) * UINT32_C(0x735a2d97);
  return z ^ (z >> 15);
}

uint32_t cms_abi_version(void) { return CMS_ABI_VERSION; }

cms_t *cms_create(uint32_t width, uint32_t depth, uint32_t slots, uint32_t seed) {
  if (width == 0 || depth == 0 || slots == 0 || depth > 64 || slots > 256) return NULL;
  /* checked in 64 bits so a 32-bit size_t cannot wrap */
  uint64_t n = (uint64_t)width * depth * slots;
  if (n * 4u > CMS_MAX_BYTES) return NULL;
  cms_t *s = (cms_t *)malloc(sizeof(cms_t) + 2u * depth * sizeof(uint32_t));
  if (s == NULL) return NULL;
  s->counters = (uint32_t *)malloc((size_t)n * 4u);
  if (s->counters == NULL) {
    free(s);
    return NULL;
  }
  memset(s->counters, 0, (size_t)n * 4u);
  s->width = width;
  s->depth = depth;
  s->slots = slots;
  s->seed = seed;
  s->ncounters = (size_t)n;
  uint32_t state = seed ^ UINT32_C(0x5bd1e995);
  for (uint32_t i = 0; i < depth; i++) {
    s->row[i] = next_param(&state) | 1u;
    s->row[depth + i] = next_param(&state);
  }
  return s;
}

void cms_destroy(cms_t *s) {
  if (s == NULL) return;
  free(s->counters);
  free(s);
}

uint32_t *cms_counters(cms_t *s) { return s->counters; }
uint32_t cms_width(const cms_t *s) { return s->width; }
uint32_t cms_depth(const cms_t *s) { return s->depth; }
uint32_t cms_slots(const cms_t *s) { return s->slots; }
double cms_memory_bytes(const cms_t *s) { return (double)s->ncounters * 4.0; }
uint32_t cms_row_mul(const cms_t *s, uint32_t row) { return row < s->depth ? s->row[row] : 0; }
uint32_t cms_row_add(const cms_t *s, uint32_t row) { return row < s->depth ? s->row[s->depth + row] : 0; }

/*
 * Two 32-bit lanes with different constants over the key's bytes taken as little-endian words (the last
 * one zero-padded, the length mixed in at the end). Byte-wise word assembly keeps the result independent
 * of the host's endianness and alignment.
 */
void cms_fingerprint(const uint8_t *key, size_t len, uint32_t *out) {
  uint32_t a = UINT32_C(0x2d358dcc), b = UINT32_C(0x9747b28c);
  size_t i = 0;
  for (;;) {
    uint32_t w;
    size_t rest = len - i;
    if (rest >= 4) {
      w = (uint32_t)key[i] | ((uint32_t)key[i + 1] << 8) | ((uint32_t)key[i + 2] << 16) |
          ((uint32_t)key[i + 3] << 24);
      i += 4;
    } else if (rest > 0) {
      w = 0;
      for (size_t j = 0; j < rest; j++) w |= (uint32_t)key[i + j] << (8u * j);
      i = len;
    } else {
      break;
    }
    uint32_t k = w * UINT32_C(0xcc9e2d51);
    k = rotl32(k, 15) * UINT32_C(0x1b873593);
    a = rotl32(a ^ k, 13) * 5u + UINT32_C(0xe6546b64);
    uint32_t m = w * UINT32_C(0x85ebca77);
    m = rotl32(m, 17) * UINT32_C(0xc2b2ae3d);
    b = rotl32(b ^ m, 11) * 9u + UINT32_C(0x27d4eb2f);
  }
  out[0] = fmix32(a ^ (uint32_t)len);
  out[1] = fmix32(b ^ (uint32_t)len ^ UINT32_C(0x165667b1));
}

/*
 * Row i's column: fmix32(a + mul_i * b + add_i) reduced by multiply-shift (no power-of-two width needed).
 * Every row has its own parameters and goes through a full avalanche, unlike h1 + i * h2 whose rows share
 * one linear structure, so two keys collide in all rows only with ~1/width^depth chance (plus 2^-64 for a
 * fingerprint collision).
 */
static inline uint32_t column(const cms_t *s, uint32_t i, uint32_t a, uint32_t b) {
  uint32_t h = fmix32(a + b * s->row[i] + s->row[s->depth + i]);
  return (uint32_t)(((uint64_t)h * s->width) >> 32);
}

static uint32_t add_fp(cms_t *s, uint32_t slot, uint32_t a, uint32_t b, uint32_t count) {
  size_t base[64];
  const uint32_t depth = s->depth, slots = s->slots;
  uint32_t *c = s->counters;
  uint32_t min = CMS_SAT;
  for (uint32_t i = 0; i < depth; i++) {
    base[i] = ((size_t)i * s->width + column(s, i, a, b)) * slots;
    uint32_t v = c[base[i] + slot];
    if (v < min) min = v;
  }
  /* conservative update: raise each row only as far as the new minimum needs */
  uint32_t target = (min > CMS_SAT - count) ? CMS_SAT : min + count;
  uint64_t est = UINT64_MAX;
  for (uint32_t i = 0; i < depth; i++) {
    uint32_t *cell = c + base[i];
    if (cell[slot] < target) cell[slot] = target;
    uint64_t sum = 0;
    for (uint32_t k = 0; k < slots; k++) sum += cell[k];
    if (sum < est) est = sum;
  }
  return est > CMS_SAT ? CMS_SAT : (uint32_t)est;
}

uint32_t cms_add(cms_t *s, uint32_t slot, const uint8_t *key, size_t len, uint32_t count) {
  uint32_t fp[2];
  if (slot >= s->slots) return 0;
  cms_fingerprint(key, len, fp);
  return add_fp(s, slot, fp[0], fp[1], count);
}

uint32_t cms_estimate(const cms_t *s, const uint8_t *key, size_t len) {
  uint32_t fp[2];
  cms_fingerprint(key, len, fp);
  uint64_t est = UINT64_MAX;
  for (uint32_t i = 0; i < s->depth; i++) {
    const uint32_t *cell = s->counters + ((size_t)i * s->width + column(s, i, fp[0], fp[1])) * s->slots;
    uint64_t sum = 0;
    for (uint32_t k = 0; k < s->slots; k++) sum += cell[k];
    if (sum < est) est = sum;
  }
  return est > CMS_SAT ? CMS_SAT : (uint32_t)est;
}

void cms_add_batch(cms_t *s, uint32_t slot, const uint8_t *keys, const uint32_t *ends, uint32_t n,
                   uint32_t *out) {
  uint32_t fp[2], start = 0;
  if (slot >= s->slots) return;
  for (uint32_t i = 0; i < n; i++) {
    cms_fingerprint(keys + start, ends[i] - start, fp);
    uint32_t est = add_fp(s, slot, fp[0], fp[1], 1);
    if (out != NULL) out[i] = est;
    start = ends[i];
  }
}

int cms_merge(cms_t *dst, const cms_t *src) {
  if (dst->width != src->width || dst->depth != src->depth || dst->slots != src->slots) return -1;
  if (memcmp(dst->row, src->row, 2u * dst->depth * sizeof(uint32_t)) != 0) return -1;
  for (size_t i = 0; i < dst->ncounters; i++) {
    uint32_t x = dst->counters[i], y = src->counters[i];
    dst->counters[i] = (x > CMS_SAT - y) ? CMS_SAT : x + y;
  }
  return 0;
}

void cms_clear_slot(cms_t *s, uint32_t slot) {
  if (slot >= s->slots) return;
  for (size_t i = slot; i < s->ncounters; i += s->slots) s->counters[i] = 0;
}

void cms_clear(cms_t *s) { memset(s->counters, 0, s->ncounters * 4u); }
