/* How zero1 shares the parameters out over the ranks: whole parameters,
 * the largest first, each to the rank that holds the fewest bytes so far
 * (the lowest such rank on a tie). Every rank computes the same partition
 * from the same model, so no rank needs to be told who owns what. */
#ifndef KILN_PARALLEL_ZERO1_PARTITION_H
#define KILN_PARALLEL_ZERO1_PARTITION_H

#include <stddef.h>

/* owner[i] = the rank that updates the parameter of bytes[i], for
 * n parameters over `world` ranks. Returns 0 when out of memory. */
int kp_partition_by_size(const double* bytes, size_t n, int world, int* owner);

#endif /* KILN_PARALLEL_ZERO1_PARTITION_H */
