/* Shared by the files of the kiln-example-swish plugin: the host table, the
 * registration of each part, and small helpers over tensors and ops. */
#ifndef SWISH_PLUGIN_H
#define SWISH_PLUGIN_H

#include <kiln/kiln_plugin.h>

/* A copy of the host table given to register_fn. Only its function
 * pointers are used: they are the same for every runtime that loads the
 * plugin, while its `runtime` is only the one registering at the time. */
extern const kiln_host* host;

/* Elements per parallel_for chunk: a tensor smaller than this is computed by
 * one thread, where handing out work would cost more than the loop. */
#define SWISH_PLUGIN_GRAIN 16384

kiln_status register_swish_ops(kiln_registrar* registrar);
kiln_status register_swish_layer(kiln_registrar* registrar);
kiln_status register_sign_op(kiln_registrar* registrar);
kiln_status register_lion(kiln_registrar* registrar, kiln_runtime* rt);

/* The data, element count and dtype of a contiguous tensor (what a kernel
 * receives). */
kiln_status tensor_elements(const kiln_tensor* t, void** data, int64_t* numel, kiln_dtype* dtype);

/* The value of a one-element f32 or f64 tensor. */
kiln_status tensor_scalar_value(const kiln_tensor* t, double* out);

int64_t desc_numel(const kiln_tensor_desc* desc);

/* "[2, 3]" into buf (truncated to `size`), for error messages. */
const char* desc_shape_text(const kiln_tensor_desc* desc, char* buf, size_t size);

/* "f32", "f64", ...; for error messages. */
const char* dtype_text(kiln_dtype dtype);

/* Fails with a message naming `what` unless `desc` is an f32 or f64 tensor. */
kiln_status check_float(const kiln_tensor_desc* desc, const char* what);

/* Calls the op `name` of `rt`, which has one output. */
kiln_status call_op1(kiln_runtime* rt, const char* name, kiln_tensor* const* inputs, size_t n_inputs,
                     const kiln_attr* attrs, size_t n_attrs, kiln_tensor** out);

#endif /* SWISH_PLUGIN_H */
