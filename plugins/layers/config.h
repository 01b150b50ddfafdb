/* Checks of configuration entries, and owned copies of attribute lists.
 * Entries arrive checked for type and completed with defaults (see
 * kiln_attr_spec); these check their values. Each failure names the layer,
 * the entry, the value given and what was expected. */
#ifndef KILN_LAYERS_CONFIG_H
#define KILN_LAYERS_CONFIG_H

#include <kiln/kiln_plugin.h>

/* [1] and [0]: defaults of list entries (a stride, a padding). */
extern const int64_t kl_one[1];
extern const int64_t kl_zero[1];

/* An INT entry that must be >= `min`. */
kiln_status kl_check_int_min(const char* layer, const kiln_attr* entry, int64_t min);

/* INT entries where `divisor` (>= 1) must divide `dividend`
 * (embed_dim and num_heads). */
kiln_status kl_check_divisible(const char* layer, const kiln_attr* dividend, const kiln_attr* divisor);

/* A FLOAT entry in [low, high] (or [low, high) when `high_open`). */
kiln_status kl_check_float_range(const char* layer, const kiln_attr* entry, double low, double high, int high_open);

/* An INTS entry of one or two values ([k] means [k, k], as in PyTorch's
 * kernel_size=3), each >= `min`; written to out[2] (height, width). With
 * `empty_ok`, an empty list passes (an omitted stride) and leaves out unset. */
kiln_status kl_read_pair(const char* layer, const kiln_attr* entry, int64_t min, int empty_ok, int64_t out[2]);

/* A STRING entry that must be one of the NULL-terminated `choices`; its
 * index goes to *out. */
kiln_status kl_read_choice(const char* layer, const kiln_attr* entry, const char* const* choices, int* out);

/* An owned copy of an attribute list: the values (lists and strings) are
 * copied, the name pointers are kept as given. */
typedef struct kl_attrs {
  kiln_attr* items;
  size_t count;
} kl_attrs;

kiln_status kl_attrs_copy(const kiln_attr* attrs, size_t n, kl_attrs* out);
void kl_attrs_free(kl_attrs* a);

#endif /* KILN_LAYERS_CONFIG_H */
