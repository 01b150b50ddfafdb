#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

kiln_status kl_check_int_min(const char* layer, const kiln_attr* entry, int64_t min) {
  if (entry->value.i >= min) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s must be >= %lld, got %lld", layer, entry->name, (long long)min,
                 (long long)entry->value.i);
}

const int64_t kl_one[1] = {1};
const int64_t kl_zero[1] = {0};

kiln_status kl_check_divisible(const char* layer, const kiln_attr* dividend, const kiln_attr* divisor) {
  if (dividend->value.i % divisor->value.i == 0) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s = %lld must be divisible by %s = %lld", layer, dividend->name,
                 (long long)dividend->value.i, divisor->name, (long long)divisor->value.i);
}

kiln_status kl_check_float_range(const char* layer, const kiln_attr* entry, double low, double high, int high_open) {
  const double v = entry->value.f;
  if (v >= low && (high_open ? v < high : v <= high)) return KILN_OK;
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s must be in [%g, %g%c, got %g", layer, entry->name, low, high,
                 high_open ? ')' : ']', v);
}

kiln_status kl_read_pair(const char* layer, const kiln_attr* entry, int64_t min, int empty_ok, int64_t out[2]) {
  const size_t n = entry->value.ints.len;
  const int64_t* v = entry->value.ints.data;
  size_t i;
  if (n == 0 && empty_ok) return KILN_OK;
  if (n != 1 && n != 2)
    return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s takes 1 or 2 values (height, width), got %zu", layer,
                   entry->name, n);
  for (i = 0; i < n; ++i) {
    if (v[i] < min)
      return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s values must be >= %lld, got %lld", layer, entry->name,
                     (long long)min, (long long)v[i]);
  }
  out[0] = v[0];
  out[1] = v[n - 1];
  return KILN_OK;
}

kiln_status kl_read_choice(const char* layer, const kiln_attr* entry, const char* const* choices, int* out) {
  char expected[256] = "";
  int i;
  for (i = 0; choices[i]; ++i) {
    if (strcmp(entry->value.s, choices[i]) == 0) {
      *out = i;
      return KILN_OK;
    }
  }
  for (i = 0; choices[i]; ++i) {
    const size_t used = strlen(expected);
    snprintf(expected + used, sizeof expected - used, "%s\"%s\"", i ? ", " : "", choices[i]);
  }
  return kl_fail(KILN_ERR_INVALID_ARGUMENT, "%s: %s must be one of %s, got \"%s\"", layer, entry->name, expected,
                 entry->value.s);
}

/* A malloc'd copy of `bytes` bytes (at least one, so that an empty list
 * still has an address). */
static void* copy_bytes(const void* src, size_t bytes) {
  void* dst = malloc(bytes ? bytes : 1);
  if (dst && bytes) memcpy(dst, src, bytes);
  return dst;
}

static void* owned_value(const kiln_attr* a) {
  switch (a->type) {
    case KILN_ATTR_INTS: return (void*)a->value.ints.data;
    case KILN_ATTR_FLOATS: return (void*)a->value.floats.data;
    case KILN_ATTR_STRING: return (void*)a->value.s;
    default: return NULL;
  }
}

kiln_status kl_attrs_copy(const kiln_attr* attrs, size_t n, kl_attrs* out) {
  kl_attrs copy;
  size_t i;
  int complete = 1;
  copy.count = n;
  copy.items = calloc(n ? n : 1, sizeof *copy.items);
  if (!copy.items) return kl_fail(KILN_ERR_OUT_OF_MEMORY, "no memory for a layer's %zu attributes", n);
  for (i = 0; i < n; ++i) {
    kiln_attr* a = &copy.items[i];
    *a = attrs[i];
    if (a->type == KILN_ATTR_INTS) {
      a->value.ints.data = copy_bytes(attrs[i].value.ints.data, attrs[i].value.ints.len * sizeof(int64_t));
      complete = complete && a->value.ints.data;
    } else if (a->type == KILN_ATTR_FLOATS) {
      a->value.floats.data = copy_bytes(attrs[i].value.floats.data, attrs[i].value.floats.len * sizeof(double));
      complete = complete && a->value.floats.data;
    } else if (a->type == KILN_ATTR_STRING) {
      a->value.s = copy_bytes(attrs[i].value.s, strlen(attrs[i].value.s) + 1);
      complete = complete && a->value.s;
    }
  }
  if (!complete) {
    kl_attrs_free(&copy);
    return kl_fail(KILN_ERR_OUT_OF_MEMORY, "no memory for a copy of a layer's attributes");
  }
  *out = copy;
  return KILN_OK;
}

void kl_attrs_free(kl_attrs* a) {
  size_t i;
  if (!a->items) return;
  for (i = 0; i < a->count; ++i) free(owned_value(&a->items[i]));
  free(a->items);
  a->items = NULL;
  a->count = 0;
}
