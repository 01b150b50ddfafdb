#include "zero1_partition.h"

#include <stdlib.h>

typedef struct sized {
  double bytes;
  size_t index;
} sized;

/* Largest first; equal sizes in the model's order, so the order is total. */
static int larger_first(const void* a, const void* b) {
  const sized* x = a;
  const sized* y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

int kp_partition_by_size(const double* bytes, size_t n, int world, int* owner) {
  sized* order = calloc(n ? n : 1, sizeof *order);
  double* load = calloc((size_t)world, sizeof *load);
  size_t i;
  if (!order || !load) {
    free(order);
    free(load);
    return 0;
  }
  for (i = 0; i < n; ++i) {
    order[i].bytes = bytes[i];
    order[i].index = i;
  }
  qsort(order, n, sizeof *order, larger_first);
  for (i = 0; i < n; ++i) {
    int r, least = 0;
    for (r = 1; r < world; ++r) {
      if (load[r] < load[least]) least = r;
    }
    owner[order[i].index] = least;
    load[least] += order[i].bytes;
  }
  free(order);
  free(load);
  return 1;
}
