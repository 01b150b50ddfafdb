/*
 * kiln.h: the C API of kiln, an embeddable neural-network training runtime.
 *
 * This is the one door for host applications (and for the Lua layer and every
 * language binding): plain C99, opaque reference-counted handles, status codes.
 * No C++ type or exception ever crosses it, and nothing in it aborts the
 * process: a failing call returns a kiln_status and kiln_last_error() says what
 * was wrong and what was expected.
 *
 * Example: (2x3 ones) reshaped to 3x2, read back.
 *
 *   kiln_runtime* rt = NULL;
 *   kiln_tensor *x = NULL, *y = NULL;
 *   const kiln_op* reshape = NULL;
 *   const int64_t shape[2] = {2, 3}, new_shape[2] = {3, 2};
 *   float out[6];
 *   if (kiln_runtime_create(NULL, &rt) != KILN_OK) { puts(kiln_last_error()); return 1; }
 *   kiln_tensor_full(rt, shape, 2, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &x);
 *   kiln_op_find(rt, "reshape", &reshape);                     (look up once)
 *   kiln_attr attr = kiln_attr_ints("shape", new_shape, 2);
 *   kiln_op_call1(rt, reshape, &x, 1, &attr, 1, &y);           (call by handle)
 *   kiln_tensor_read(y, out, sizeof out);
 *   kiln_tensor_release(y); kiln_tensor_release(x); kiln_runtime_release(rt);
 *
 * Ownership rules (they hold for every function below):
 * - A call that gives back a handle (kiln_runtime*, kiln_tensor*) gives the
 *   caller one reference; drop it with the matching kiln_*_release. Releasing
 *   NULL does nothing. kiln_*_retain adds a reference.
 * - A tensor holds a reference on its runtime, so releasing the runtime
 *   before its tensors is safe: the runtime goes when the last of them does.
 * - kiln_op handles belong to their runtime and stay valid as long as it
 *   lives; they are never released.
 * - Handles passed as arguments stay the caller's: no call takes over the
 *   caller's reference (the library adds its own for what it keeps).
 * - Pointers the caller passes in (shapes, buffers, attribute arrays, names)
 *   are only read during the call, unless a function says otherwise.
 * - Strings the library returns are owned by the library; how long each
 *   lives is said where it is returned.
 * - On failure, output pointers are left unchanged and no reference is given.
 *
 * Threads: handles may be used from several threads; reference counts are
 * atomic. Grad mode (kiln_no_grad_begin/end) is per runtime and per thread.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  if defined(KILN_BUILDING_LIBRARY)
#    define KILN_API __declspec(dllexport)
#  else
#    define KILN_API __declspec(dllimport)
#  endif
#else
#  define KILN_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version ------------------------------------------------------------- */

/* Within a major version the API only grows. */
#define KILN_VERSION_MAJOR 0
#define KILN_VERSION_MINOR 1
#define KILN_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. Compare it
 * with the KILN_VERSION_* macros to detect a header/library mismatch. */
KILN_API const char* kiln_version(void);

/* ---- status and errors --------------------------------------------------- */

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad value, an unknown attribute */
  KILN_ERR_SHAPE_MISMATCH = 2,
  KILN_ERR_DTYPE_MISMATCH = 3,
  KILN_ERR_DEVICE_MISMATCH = 4, /* also: the device does not exist */
  KILN_ERR_NOT_FOUND = 5,       /* an unknown op name */
  KILN_ERR_OUT_OF_MEMORY = 6,
  KILN_ERR_INVALID_STATE = 7, /* e.g. backward through a freed graph */
  KILN_ERR_UNSUPPORTED = 8,   /* no kernel for this dtype/device, feature not built */
  KILN_ERR_IO = 9,
  KILN_ERR_INTERNAL = 10
} kiln_status;

/* A short name for a status ("shape mismatch"); a static string. */
KILN_API const char* kiln_status_name(kiln_status status);

/* The message of the last failing call on this thread ("" if none failed).
 * Owned by the library; valid until the next failing call on this thread. */
KILN_API const char* kiln_last_error(void);

/* ---- element types and devices -------------------------------------------- */

typedef enum kiln_dtype {
  KILN_F32 = 0,
  KILN_F64 = 1,
  KILN_F16 = 2,
  KILN_BF16 = 3,
  KILN_I32 = 4,
  KILN_I64 = 5,
  KILN_U8 = 6,
  KILN_BOOL = 7
} kiln_dtype;

typedef enum kiln_device_type { KILN_DEVICE_CPU = 0, KILN_DEVICE_CUDA = 1 } kiln_device_type;

/* ---- runtime --------------------------------------------------------------- */

/* Owns the op table, the allocators, the CPU threads and the random stream.
 * Two runtimes share nothing. */
typedef struct kiln_runtime kiln_runtime;

/* Set `size` to sizeof(kiln_runtime_options); fields past `size` (from an
 * older header) take their defaults. */
typedef struct kiln_runtime_options {
  size_t size;
  int num_threads; /* CPU kernel threads; 0: one per hardware thread */
  uint64_t seed;   /* initial seed of the random stream */
} kiln_runtime_options;

/* Creates a runtime. `options` may be NULL (defaults); it is read during the
 * call only. On success *out receives one reference. */
KILN_API kiln_status kiln_runtime_create(const kiln_runtime_options* options, kiln_runtime** out);
/* Adds a reference. NULL does nothing. */
KILN_API void kiln_runtime_retain(kiln_runtime* rt);
/* Drops a reference; the runtime is destroyed when the caller's references
 * and all its tensors are gone. NULL does nothing. */
KILN_API void kiln_runtime_release(kiln_runtime* rt);

/* Reseeds the runtime's random stream. */
KILN_API kiln_status kiln_manual_seed(kiln_runtime* rt, uint64_t seed);

/* Memory statistics of one device's allocator. Set out->size to
 * sizeof(kiln_memory_stats) first; only fields within it are written. */
typedef struct kiln_memory_stats {
  size_t size;
  int64_t current_bytes;  /* bytes held by live allocations */
  int64_t peak_bytes;     /* highest current_bytes seen */
  int64_t reserved_bytes; /* bytes obtained from the system (>= current for caching allocators) */
  int64_t num_allocs;
  int64_t num_frees;
} kiln_memory_stats;

/* `out` is owned by the caller and written during the call. */
KILN_API kiln_status kiln_memory_stats_get(kiln_runtime* rt, kiln_device_type device, int device_index,
                                           kiln_memory_stats* out);

/* ---- tensors ---------------------------------------------------------------- */

/* A reference-counted handle on an n-dimensional array (up to 8 dims). */
typedef struct kiln_tensor kiln_tensor;

/* Called exactly once, when the last tensor viewing wrapped memory is gone
 * (on any thread). Receives the `user_data` and `data` given to kiln_tensor_wrap. */
typedef void (*kiln_release_fn)(void* user_data, void* data);

/* New contiguous tensors on a device. `shape` holds `rank` dimensions and is
 * read during the call; rank 0 is a scalar. *out receives one reference. */
KILN_API kiln_status kiln_tensor_empty(kiln_runtime* rt, const int64_t* shape, int rank, kiln_dtype dtype,
                                       kiln_device_type device, int device_index, kiln_tensor** out);
KILN_API kiln_status kiln_tensor_full(kiln_runtime* rt, const int64_t* shape, int rank, double value,
                                      kiln_dtype dtype, kiln_device_type device, int device_index,
                                      kiln_tensor** out);
KILN_API kiln_status kiln_tensor_zeros(kiln_runtime* rt, const int64_t* shape, int rank, kiln_dtype dtype,
                                       kiln_device_type device, int device_index, kiln_tensor** out);

/* A CPU tensor holding a copy of `data` (row-major, `nbytes` bytes, which
 * must equal the tensor's size). `data` is read during the call only. */
KILN_API kiln_status kiln_tensor_from_data(kiln_runtime* rt, const void* data, size_t nbytes, const int64_t* shape,
                                           int rank, kiln_dtype dtype, kiln_tensor** out);

/* A CPU tensor over the caller's memory, without a copy. `data` must hold at
 * least the tensor's bytes, be aligned for the dtype, and stay valid until
 * `release` is called; kiln may read and write it. `release` is called
 * exactly once, when the last tensor viewing the memory is gone (views and
 * detached tensors keep it alive); it may be NULL when the memory outlives
 * every tensor anyway. On failure `release` is not called and the memory
 * stays the caller's. */
KILN_API kiln_status kiln_tensor_wrap(kiln_runtime* rt, void* data, size_t nbytes, const int64_t* shape, int rank,
                                      kiln_dtype dtype, kiln_release_fn release, void* user_data,
                                      kiln_tensor** out);

/* Adds a reference. NULL does nothing. */
KILN_API void kiln_tensor_retain(kiln_tensor* t);
/* Drops a reference (and the tensor's reference on its runtime when it is
 * the last). NULL does nothing. */
KILN_API void kiln_tensor_release(kiln_tensor* t);

/* Copies the elements, row-major, into `dst` (owned by the caller, at least
 * `dst_bytes` bytes, which must be >= the tensor's size in bytes). Works for
 * any layout and device. */
KILN_API kiln_status kiln_tensor_read(const kiln_tensor* t, void* dst, size_t dst_bytes);

/* The address of the first element of a contiguous CPU tensor. The memory
 * belongs to the tensor: valid while a reference on it (or a view of it)
 * lives. Strided tensors give KILN_ERR_INVALID_STATE (see
 * kiln_tensor_contiguous); other devices give KILN_ERR_UNSUPPORTED. */
KILN_API kiln_status kiln_tensor_data(const kiln_tensor* t, void** out);

/* A contiguous tensor with the same elements: a new reference on `t` itself
 * when it already is contiguous, a copy otherwise. */
KILN_API kiln_status kiln_tensor_contiguous(const kiln_tensor* t, kiln_tensor** out);

/* Queries. Every `out` is owned by the caller and written during the call.
 * kiln_tensor_shape writes rank dims into `dims`, which holds `max_dims`. */
KILN_API kiln_status kiln_tensor_rank(const kiln_tensor* t, int* out);
KILN_API kiln_status kiln_tensor_shape(const kiln_tensor* t, int64_t* dims, int max_dims);
KILN_API kiln_status kiln_tensor_numel(const kiln_tensor* t, int64_t* out);
KILN_API kiln_status kiln_tensor_dtype(const kiln_tensor* t, kiln_dtype* out);
KILN_API kiln_status kiln_tensor_device(const kiln_tensor* t, kiln_device_type* type, int* index);

/* ---- autograd ----------------------------------------------------------------- */

/* Marks a floating-point leaf as a parameter: ops record how they used it
 * and backward fills its gradient. */
KILN_API kiln_status kiln_tensor_set_requires_grad(kiln_tensor* t, int requires_grad);
KILN_API kiln_status kiln_tensor_requires_grad(const kiln_tensor* t, int* out);

/* The gradient accumulated by backward: *out receives a new reference, or
 * NULL when there is none yet. */
KILN_API kiln_status kiln_tensor_grad(const kiln_tensor* t, kiln_tensor** out);
/* Drops the accumulated gradient; the next backward starts from zero. */
KILN_API kiln_status kiln_tensor_zero_grad(kiln_tensor* t);
/* A new tensor on the same memory with no autograd history. */
KILN_API kiln_status kiln_tensor_detach(const kiln_tensor* t, kiln_tensor** out);
/* A copy on another device (a new reference on `t` when it is already
 * there). Gradients flow through the copy. */
KILN_API kiln_status kiln_tensor_to(const kiln_tensor* t, kiln_device_type device, int device_index,
                                    kiln_tensor** out);

/* Runs reverse mode from `t`: every leaf that requires grad and took part
 * receives its gradient (added to what it had). `grad` seeds it and may be
 * NULL for a one-element `t` (then 1). The graph's saved tensors are freed
 * afterwards unless `retain_graph` is nonzero; a second backward through a
 * freed graph gives KILN_ERR_INVALID_STATE. */
KILN_API kiln_status kiln_backward(kiln_runtime* rt, const kiln_tensor* t, const kiln_tensor* grad,
                                   int retain_graph);

/* Grad recording off for this runtime on this thread until the matching
 * end (an SGD update, an evaluation). Scopes nest; each begin needs one end
 * on the same thread. */
KILN_API kiln_status kiln_no_grad_begin(kiln_runtime* rt);
KILN_API kiln_status kiln_no_grad_end(kiln_runtime* rt);
/* *out = 1 when ops record gradients on this thread for this runtime. */
KILN_API kiln_status kiln_grad_enabled(kiln_runtime* rt, int* out);

/* ---- ops ------------------------------------------------------------------------ */

/* An op of a runtime ("matmul", "relu", ...): look it up once by name, then
 * call it by handle. Owned by the runtime; valid while the runtime lives. */
typedef struct kiln_op kiln_op;

/* Unknown names give KILN_ERR_NOT_FOUND with close matches in the message. */
KILN_API kiln_status kiln_op_find(kiln_runtime* rt, const char* name, const kiln_op** out);

/* Values equal the runtime's attribute types; an integer is accepted where a
 * float is expected, and integers where floats are. */
typedef enum kiln_attr_type {
  KILN_ATTR_INT = 0,
  KILN_ATTR_FLOAT = 1,
  KILN_ATTR_BOOL = 2,
  KILN_ATTR_INTS = 3,
  KILN_ATTR_FLOATS = 4,
  KILN_ATTR_STRING = 5,
  KILN_ATTR_DTYPE = 6
} kiln_attr_type;

/* One named attribute of an op call. Everything it points to is read during
 * the call only. Attributes not given take the op's defaults. */
typedef struct kiln_attr {
  const char* name;
  kiln_attr_type type;
  union {
    int64_t i;
    double f;
    int b;
    struct {
      const int64_t* data;
      size_t len;
    } ints;
    struct {
      const double* data;
      size_t len;
    } floats;
    const char* s;
    kiln_dtype dtype;
  } value;
} kiln_attr;

/* Calls `op` on `inputs` (n_inputs handles; a NULL entry leaves an optional
 * input out, such as a bias) with `attrs` (n_attrs entries; may be NULL when
 * n_attrs is 0). Writes up to `max_outputs` new references into `outputs`
 * (caller-owned array) and their number into *n_outputs; an op with more
 * outputs than `max_outputs` fails and gives none. Inputs must belong to `rt`. */
KILN_API kiln_status kiln_op_call(kiln_runtime* rt, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                                  const kiln_attr* attrs, size_t n_attrs, kiln_tensor** outputs, size_t max_outputs,
                                  size_t* n_outputs);
/* kiln_op_call for an op with exactly one output. */
KILN_API kiln_status kiln_op_call1(kiln_runtime* rt, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                                   const kiln_attr* attrs, size_t n_attrs, kiln_tensor** out);

/* Attribute constructors. The attribute points at `name` (and at `data` or
 * `s`), which must stay valid until the call that uses it returns. */
static inline kiln_attr kiln_attr_int(const char* name, int64_t v) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_INT;
  a.value.i = v;
  return a;
}
static inline kiln_attr kiln_attr_float(const char* name, double v) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_FLOAT;
  a.value.f = v;
  return a;
}
static inline kiln_attr kiln_attr_bool(const char* name, int v) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_BOOL;
  a.value.b = v;
  return a;
}
static inline kiln_attr kiln_attr_ints(const char* name, const int64_t* data, size_t len) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_INTS;
  a.value.ints.data = data;
  a.value.ints.len = len;
  return a;
}
static inline kiln_attr kiln_attr_floats(const char* name, const double* data, size_t len) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_FLOATS;
  a.value.floats.data = data;
  a.value.floats.len = len;
  return a;
}
static inline kiln_attr kiln_attr_string(const char* name, const char* s) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_STRING;
  a.value.s = s;
  return a;
}
static inline kiln_attr kiln_attr_dtype(const char* name, kiln_dtype dtype) {
  kiln_attr a;
  a.name = name;
  a.type = KILN_ATTR_DTYPE;
  a.value.dtype = dtype;
  return a;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_H */
