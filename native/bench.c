/*
 * The floor for bench/sketch: the library's own add+check (cms_add returns the windowed estimate) on the
 * same workload the JS benchmark replays — keys "user:<i>", i drawn by xorshift32 from `keys` distinct
 * values — on the default limiter shape (16384 x 4 rows x 4 window slots = 1 MiB).
 * Usage: bench [ops] [keys] [rounds]; prints one JSON line with the median ns per add+check.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cms.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  uint32_t ops = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000u;
  uint32_t nkeys = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 100000u;
  int rounds = argc > 3 ? atoi(argv[3]) : 7;
  if (rounds < 1 || rounds > 99 || ops == 0 || nkeys == 0) return 2;

  char *buf = malloc((size_t)ops * 16);
  uint32_t *off = malloc((size_t)ops * 4), *len = malloc((size_t)ops * 4);
  if (!buf || !off || !len) return 2;
  uint32_t x = 0x9E3779B9u, pos = 0;
  for (uint32_t i = 0; i < ops; i++) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    int n = sprintf(buf + pos, "user:%u", x % nkeys);
    off[i] = pos; len[i] = (uint32_t)n; pos += (uint32_t)n;
  }

  cms_t *s = cms_create(16384, 4, 4, 0);
  if (!s) return 2;
  double results[99];
  volatile uint32_t sink = 0;
  for (int r = 0; r < rounds; r++) {
    cms_clear(s);
    double t0 = now_ns();
    uint32_t acc = 0;
    for (uint32_t i = 0; i < ops; i++) acc += cms_add(s, 0, (const uint8_t *)buf + off[i], len[i], 1);
    results[r] = (now_ns() - t0) / ops;
    sink += acc;
  }
  qsort(results, (size_t)rounds, sizeof(double), cmp_double);
  printf("{\"name\":\"c-floor\",\"nsPerOp\":%.2f,\"min\":%.2f,\"max\":%.2f,\"ops\":%u,\"keys\":%u,\"rounds\":%d,\"sink\":%u}\n",
         results[rounds / 2], results[0], results[rounds - 1], ops, nkeys, rounds, (unsigned)sink);
  cms_destroy(s);
  free(buf); free(off); free(len);
  return 0;
}
