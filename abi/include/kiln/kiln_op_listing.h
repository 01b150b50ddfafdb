/*
 * kiln_op_listing.h: the ops of a runtime (built-in and plugins') with their
 * inputs, attributes and defaults, for tools and bindings.
 * kiln.h includes it; the ownership and threading rules at the top of kiln.h
 * hold here too.
 */
#ifndef KILN_KILN_OP_LISTING_H
#define KILN_KILN_OP_LISTING_H

#include "kiln/kiln.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- listing ops ------------------------------------------------------------------ */

/* What a runtime's ops are, built-in and from plugins alike: for tools
 * (`kiln ops`) and bindings that make a method of every op.
 *
 *   size_t n = 0;
 *   kiln_op_count(rt, &n);
 *   for (size_t i = 0; i < n; ++i) {
 *     const kiln_op* op = NULL;
 *     kiln_op_info info = {.size = sizeof(kiln_op_info)};
 *     kiln_op_at(rt, i, &op);
 *     kiln_op_info_get(op, &info);
 *     printf("%s: %zu inputs\n", info.name, info.num_inputs);
 *   }
 *
 * One op by name: kiln_op_find, then kiln_op_info_get. Every string these
 * give is owned by the runtime and valid while it lives (also after the
 * plugin that registered the op is unloaded). */

/* The number of ops, and op `index` (< *count) in name order. Loading a
 * plugin adds its ops and moves the indices after them: count again after
 * kiln_plugin_load. An index out of range is KILN_ERR_INVALID_ARGUMENT. */
KILN_API kiln_status kiln_op_count(kiln_runtime* rt, size_t* count);
KILN_API kiln_status kiln_op_at(kiln_runtime* rt, size_t index, const kiln_op** out);

/* Set `size` to sizeof(kiln_op_info) first; only fields within it are
 * written. Kernel dtypes are bit sets: bit (1u << d) is set for each
 * kiln_dtype d the op has a kernel for on that device. */
typedef struct kiln_op_info {
  size_t size;
  const char* name;
  const char* plugin;  /* the plugin that registered the op; "" for a built-in op */
  size_t num_inputs;   /* described by kiln_op_input_get */
  size_t num_attrs;    /* described by kiln_op_attr_get */
  int has_backward;    /* nonzero: gradients flow through the op */
  int writes_inputs;   /* nonzero: it updates its inputs in place (optimizer steps) */
  int is_view;         /* nonzero: its output shares the input's memory where the layout allows */
  uint32_t cpu_dtypes;
  uint32_t cuda_dtypes; /* 0 also in a build without CUDA */
} kiln_op_info;
KILN_API kiln_status kiln_op_info_get(const kiln_op* op, kiln_op_info* out);

/* Input `index` (< num_inputs) of an op, in call order. Set `size` first. */
typedef struct kiln_op_input_info {
  size_t size;
  const char* name;
  int optional; /* nonzero: may be passed as NULL (a bias) */
  int variadic; /* nonzero: the last input, taking zero or more tensors (concat) */
} kiln_op_input_info;
KILN_API kiln_status kiln_op_input_get(const kiln_op* op, size_t index, kiln_op_input_info* out);

/* Attribute `index` (< num_attrs) of an op, in schema order. Set `size`
 * first. */
typedef struct kiln_op_attr_info {
  size_t size;
  const char* name;
  kiln_attr_type type;
  int required;             /* nonzero: no default; every call must give it */
  const char* default_text; /* the default as kiln writes it: 2, 0.5, true, [1, 1], "mean", f32; "" when required */
  kiln_attr default_value;  /* the default itself, named `name`; when required, only its name and type are set */
} kiln_op_attr_info;
KILN_API kiln_status kiln_op_attr_get(const kiln_op* op, size_t index, kiln_op_attr_info* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_OP_LISTING_H */
