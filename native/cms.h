/*
 * Count-min sketch with conservative update and 32-bit saturating counters, for the diag-instrumentation
 * package. C99, no dependency beyond malloc/free/memset, so one source builds for every platform we ship.
 *
 * A sketch has `slots` counters per cell, interleaved (counters[(row * width + col) * slots + slot]):
 * the time-window scheme keeps one slot per sub-window, and interleaving puts all of a cell's slots in one
 * cache line, so an add plus a windowed estimate touches `depth` lines rather than depth * slots.
 */
#ifndef DIAG_CMS_H
#define DIAG_CMS_H

#include <stddef.h>
#include <stdint.h>

/* Bumped whenever a signature, the hash, or the memory layout changes: JS reads the counters directly. */
#define CMS_ABI_VERSION 1

#if defined(_WIN32)
#  define CMS_API __declspec(dllexport)
#else
#  define CMS_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cms cms_t;

CMS_API uint32_t cms_abi_version(void);

/* NULL when a dimension is 0, the counters would exceed 2^31 bytes, or malloc fails. */
CMS_API cms_t *cms_create(uint32_t width, uint32_t depth, uint32_t slots, uint32_t seed);
CMS_API void cms_destroy(cms_t *s);

CMS_API uint32_t *cms_counters(cms_t *s);
CMS_API uint32_t cms_width(const cms_t *s);
CMS_API uint32_t cms_depth(const cms_t *s);
CMS_API uint32_t cms_slots(const cms_t *s);
/* Bytes of counters (width * depth * slots * 4); the control block is not counted. */
CMS_API double cms_memory_bytes(const cms_t *s);
/* Per-row hash parameters, so a caller that hashes on its side (the JS fast path) uses the same rows. */
CMS_API uint32_t cms_row_mul(const cms_t *s, uint32_t row);
CMS_API uint32_t cms_row_add(const cms_t *s, uint32_t row);

/* The 64-bit key fingerprint every row index is derived from; out[0], out[1] are its two halves. */
CMS_API void cms_fingerprint(const uint8_t *key, size_t len, uint32_t *out);

/* Counts `count` events for the key in `slot` (conservative update) and returns the estimate over all slots. */
CMS_API uint32_t cms_add(cms_t *s, uint32_t slot, const uint8_t *key, size_t len, uint32_t count);
CMS_API uint32_t cms_estimate(const cms_t *s, const uint8_t *key, size_t len);

/*
 * n keys packed back to back in `keys`; key i spans [ends[i-1], ends[i]) (ends[-1] = 0). Each counts one
 * event in `slot`; when `out` is not NULL, out[i] receives the estimate right after key i was counted.
 */
CMS_API void cms_add_batch(cms_t *s, uint32_t slot, const uint8_t *keys, const uint32_t *ends, uint32_t n,
                           uint32_t *out);

/* dst += src cell by cell (saturating). 0 on success, -1 when shape or hash parameters differ. */
CMS_API int cms_merge(cms_t *dst, const cms_t *src);

CMS_API void cms_clear_slot(cms_t *s, uint32_t slot);
CMS_API void cms_clear(cms_t *s);

#ifdef __cplusplus
}
#endif

#endif
