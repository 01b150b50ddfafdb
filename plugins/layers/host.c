#include "host.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

kiln_host kl_host;

void kl_host_set(const kiln_host* host) {
  const size_t n = host->size < sizeof kl_host ? host->size : sizeof kl_host;
  memcpy(&kl_host, host, n);
}

kiln_status kl_fail(kiln_status status, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  return kl_host.error(status, message);
}

kiln_status kl_expect_channels(const char* layer, const kiln_tensor* x, int min_rank, int max_rank,
                               const char* shapes, const char* channels_name, int64_t channels) {
  kiln_tensor_desc d;
  const kiln_status st = kl_host.tensor_describe(x, &d);
  if (st != KILN_OK) return st;
  if (d.rank < min_rank || d.rank > max_rank)
    return kl_fail(KILN_ERR_SHAPE_MISMATCH, "%s: input must be %s, got rank %d", layer, shapes, d.rank);
  if (d.dims[1] != channels)
    return kl_fail(KILN_ERR_SHAPE_MISMATCH, "%s: input has %lld channels (dim 1), expected %s = %lld", layer,
                   (long long)d.dims[1], channels_name, (long long)channels);
  return KILN_OK;
}

kiln_status kl_expect_inputs(const char* layer, const kiln_layer_call* call, size_t expected) {
  if (call->n_inputs == expected) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s takes %zu input%s, got %zu", layer, expected,
                 expected == 1 ? "" : "s", call->n_inputs);
}
