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

#include "kiln/kiln_types.h"

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

/* A short name for a status ("shape mismatch"); a static string. */
KILN_API const char* kiln_status_name(kiln_status status);

/* The message of the last failing call on this thread ("" if none failed).
 * Owned by the library; valid until the next failing call on this thread. */
KILN_API const char* kiln_last_error(void);

/* Records `message` as this thread's last error and returns `status`: for
 * layers built on this API (the Lua module, bindings) that report their own
 * failures through the same channel. */
KILN_API kiln_status kiln_error_set(kiln_status status, const char* message);

/* ---- runtime --------------------------------------------------------------- */

/* Owns the op table, the allocators, the CPU threads and the random stream.
 * Two runtimes share nothing. */

/* Set `size` to sizeof(kiln_runtime_options); fields past `size` (from an
 * older header) take their defaults. Initialise by name, so that fields
 * added later start at zero:
 *   kiln_runtime_options o = {.size = sizeof(kiln_runtime_options), .seed = 42}; */
typedef struct kiln_runtime_options {
  size_t size;
  int num_threads; /* CPU kernel threads; 0: one per hardware thread */
  uint64_t seed;   /* initial seed of the random stream */
  /* Plugins are loaded at creation from, in order: `plugin_paths` (files, or
   * folders whose lib*.so files are all loaded), the folders listed in the
   * environment variable KILN_PLUGIN_PATH (separated by ':'), then the
   * install's plugin folder (<libdir>/kiln/plugins beside libkiln.so). A
   * plugin whose name was already loaded from an earlier place is skipped.
   * A library that is refused is reported through `log` and creation goes on;
   * kiln_plugin_load refuses with an error instead. */
  const char* const* plugin_paths;
  size_t n_plugin_paths;
  int skip_default_plugins; /* nonzero: only `plugin_paths`, no search */
  kiln_log_fn log;          /* warnings and errors of the runtime; NULL: written to stderr */
  void* log_user_data;
  int log_verbose;          /* nonzero: info and debug messages too, not only warnings and errors */
  int allow_tf32;           /* nonzero: f32 matrix products and convolutions on a GPU may round their
                               inputs to TF32 for speed (off by default, as in PyTorch) */
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
 * sizeof(kiln_memory_stats) first; only fields within it are written.
 * GPU memory comes from a caching allocator: freed blocks stay reserved
 * for reuse, so reserved_bytes stays above current_bytes until
 * kiln_memory_empty_cache. The fields after num_frees describe that cache
 * and are 0 for the CPU. */
typedef struct kiln_memory_stats {
  size_t size;
  int64_t current_bytes;  /* bytes held by live allocations */
  int64_t peak_bytes;     /* highest current_bytes seen */
  int64_t reserved_bytes; /* bytes obtained from the system (>= current for caching allocators) */
  int64_t num_allocs;
  int64_t num_frees;
  int64_t active_bytes;       /* bytes of blocks in use (requests rounded up to 512 bytes); includes blocks freed
                               * but still awaiting work on another stream */
  int64_t cached_free_bytes;  /* reserved_bytes - active_bytes: reusable without asking the device */
  int64_t largest_free_block; /* bytes of the largest cached free block */
  int64_t num_reserves;       /* segments obtained from the device (cudaMalloc calls) */
  int64_t num_releases;       /* segments given back (cudaFree calls) */
  int64_t cache_hits;         /* allocations served from cached memory */
  int64_t num_cache_flushes;  /* times an allocation emptied the cache to retry after running out */
  int64_t limit_bytes;        /* cap on reserved_bytes (KILN_CUDA_MEMORY_FRACTION); 0: none */
  double fragmentation;       /* 1 - largest_free_block / cached_free_bytes; 0 when nothing is cached */
} kiln_memory_stats;

/* `out` is owned by the caller and written during the call. */
KILN_API kiln_status kiln_memory_stats_get(kiln_runtime* rt, kiln_device_type device, int device_index,
                                           kiln_memory_stats* out);

/* Gives the cached memory of one device's allocator that no tensor uses
 * back to the device (for GPU memory another library needs); it is
 * reserved again when needed. Does nothing for the CPU. */
KILN_API kiln_status kiln_memory_empty_cache(kiln_runtime* rt, kiln_device_type device, int device_index);

/* ---- build and devices ------------------------------------------------------- */

/* How this library was built. Set out->size to sizeof(kiln_build_info)
 * first; only fields within it are written. Every string is static. A
 * library that was not built with a component says "not built" for its
 * version. */
typedef struct kiln_build_info {
  size_t size;
  const char* version;              /* kiln_version() */
  int with_cuda;                    /* nonzero: the CUDA backend is built in */
  int with_nccl;                    /* nonzero: NCCL collectives are built in */
  const char* compiler;             /* "GCC 12.2.0" */
  const char* build_type;           /* "RelWithDebInfo", "Debug", ... */
  const char* onednn_version;       /* of the oneDNN library loaded: "3.0.0 (commit ...)" */
  const char* cuda_runtime_version; /* of the CUDA runtime loaded: "12.4" */
  const char* cublas_version;
  const char* cudnn_version;
  const char* nccl_version;
} kiln_build_info;
KILN_API kiln_status kiln_build_info_get(kiln_build_info* out);

/* The GPUs this runtime found when it was created: *cuda_count of them
 * (0 when none is usable) and, when there are none, why in words
 * (*cuda_unavailable_reason, "" when GPUs are usable; valid while `rt`
 * lives). Either output may be NULL. */
KILN_API kiln_status kiln_devices_get(kiln_runtime* rt, int* cuda_count, const char** cuda_unavailable_reason);

/* ---- tensors ---------------------------------------------------------------- */

/* A reference-counted handle on an n-dimensional array (up to 8 dims). */

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

/* Copies the elements of `src` into `dst` in place: same shape; the dtype
 * and device may differ (values are converted). Not recorded for gradients,
 * so it may write into a parameter (an optimizer update, loading weights). */
KILN_API kiln_status kiln_tensor_assign(kiln_tensor* dst, const kiln_tensor* src);

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

/* Unknown names give KILN_ERR_NOT_FOUND with close matches in the message. */
KILN_API kiln_status kiln_op_find(kiln_runtime* rt, const char* name, const kiln_op** out);

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

/* ---- plugins ----------------------------------------------------------------------- */

/* What a plugin registered. */
typedef enum kiln_registration_kind {
  KILN_REG_OP = 0,
  KILN_REG_LAYER = 1,
  KILN_REG_OPTIMIZER = 2,
  KILN_REG_LR_SCHEDULE = 3,
  KILN_REG_DATA_SOURCE = 4,
  KILN_REG_TRANSFORM = 5,
  KILN_REG_STRATEGY = 6
} kiln_registration_kind;

/* "layer", "optimizer", ...; a static string. */
KILN_API const char* kiln_registration_kind_name(kiln_registration_kind kind);

/* Loads one plugin library by path. A file that is not a shared library,
 * one without kiln_plugin_entry, one with no plugin ABI in common with this
 * host, one whose name is already loaded, one that registers a name that is
 * already taken, and one whose registration fails are each refused with
 * KILN_ERR_PLUGIN_REFUSED and a message naming the file and the reason;
 * nothing it registered stays, and the runtime is usable as before. */
KILN_API kiln_status kiln_plugin_load(kiln_runtime* rt, const char* path);

/* Removes the plugin `name` from the runtime: its layers, optimizers, ...
 * can no longer be created. Objects it made stay usable; the library is
 * closed when the last of them is released. Ops it registered stay in the
 * runtime's table (tapes and op handles may point at them) until the runtime
 * is destroyed, and keep the library open until then. */
KILN_API kiln_status kiln_plugin_unload(kiln_runtime* rt, const char* name);

/* Set `size` to sizeof(kiln_plugin_info) first. Strings are owned by the
 * runtime and valid until the plugin is unloaded. */
typedef struct kiln_plugin_info {
  size_t size;
  const char* name;
  const char* version;
  const char* path;          /* the file it was loaded from */
  uint32_t abi_version;      /* the plugin ABI agreed on, KILN_PLUGIN_ABI(major, minor) */
  size_t num_registrations;
} kiln_plugin_info;

/* Loaded plugins, in load order. */
KILN_API kiln_status kiln_plugin_count(kiln_runtime* rt, size_t* out);
KILN_API kiln_status kiln_plugin_info_get(kiln_runtime* rt, size_t plugin, kiln_plugin_info* out);
/* Registration `index` (< num_registrations) of a plugin; *name is valid
 * until the plugin is unloaded. */
KILN_API kiln_status kiln_plugin_registration(kiln_runtime* rt, size_t plugin, size_t index,
                                              kiln_registration_kind* kind, const char** name);

/* ---- modules -------------------------------------------------------------------------- */

/* A module has named parameters and buffers, a train/eval mode and a
 * forward. Leaf layers come from plugins ("Linear", "Conv2d", ...);
 * containers (Sequential, Graph) are built here. A module holds a reference
 * on its runtime and on the plugin that made it. */

/* A layer of a registered type, configured by `config` (names and defaults
 * per layer type; see kiln plugins). Parameters are created on the CPU as
 * f32 and initialised the layer's default way from the runtime's stream. */
KILN_API kiln_status kiln_module_create(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                                        kiln_module** out);
/* A module without parameters that calls one op (an "add" joining two graph
 * branches, a "reshape"). */
KILN_API kiln_status kiln_module_from_op(kiln_runtime* rt, const kiln_op* op, const kiln_attr* attrs, size_t n_attrs,
                                         kiln_module** out);
/* An empty Sequential: each child's outputs are the next one's inputs. */
KILN_API kiln_status kiln_sequential_create(kiln_runtime* rt, kiln_module** out);
/* Appends `child` (the container takes its own reference). `name` may be
 * NULL: the child is then named by its index ("0", "1", ...). */
KILN_API kiln_status kiln_sequential_append(kiln_module* sequential, const char* name, kiln_module* child);

/* A graph of named nodes, for skip connections and several inputs: its
 * inputs are named; each node is a module whose inputs are graph inputs or
 * earlier nodes ("name" for output 0, "name:k" for output k). Nodes run in
 * the order added. */
KILN_API kiln_status kiln_graph_create(kiln_runtime* rt, const char* const* input_names, size_t n_inputs,
                                       kiln_module** out);
KILN_API kiln_status kiln_graph_add(kiln_module* graph, const char* name, kiln_module* node,
                                    const char* const* inputs, size_t n_inputs);
/* The graph's outputs, in order (default: the last node's outputs). */
KILN_API kiln_status kiln_graph_set_outputs(kiln_module* graph, const char* const* names, size_t n_names);

KILN_API void kiln_module_retain(kiln_module* m);
KILN_API void kiln_module_release(kiln_module* m);

/* Infers the shapes through the model for inputs shaped like `inputs`,
 * running each layer once without recording gradients, in eval mode. A layer
 * that does not fit fails with its name, index, type, input shapes and the
 * reason. Writes up to `max_outputs` output descriptions. */
KILN_API kiln_status kiln_module_build(kiln_module* m, const kiln_tensor_desc* inputs, size_t n_inputs,
                                       kiln_tensor_desc* outputs, size_t max_outputs, size_t* n_outputs);

/* Runs the module. Same output rules as kiln_op_call. */
KILN_API kiln_status kiln_module_forward(kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs,
                                         kiln_tensor** outputs, size_t max_outputs, size_t* n_outputs);
KILN_API kiln_status kiln_module_forward1(kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs,
                                          kiln_tensor** out);

/* Train mode (the default) or eval mode, for the module and all it contains. */
KILN_API kiln_status kiln_module_set_training(kiln_module* m, int training);
KILN_API kiln_status kiln_module_training(const kiln_module* m, int* out);

/* The type name ("Linear", "Sequential", "Graph", "op:add"); valid while `m` lives. */
KILN_API kiln_status kiln_module_type(const kiln_module* m, const char** out);

/* Parameters and buffers of the module and everything in it, in a fixed
 * order, with dotted names ("0.weight", "block.attn.q.bias"). *name is valid
 * while `m` lives; *out receives a new reference on the tensor itself (not a
 * copy): writing into it changes the module. */
KILN_API kiln_status kiln_module_parameter_count(const kiln_module* m, size_t* out);
KILN_API kiln_status kiln_module_parameter(const kiln_module* m, size_t index, const char** name, kiln_tensor** out);
KILN_API kiln_status kiln_module_buffer_count(const kiln_module* m, size_t* out);
KILN_API kiln_status kiln_module_buffer(const kiln_module* m, size_t index, const char** name, kiln_tensor** out);

/* Moves every parameter and buffer to a device, or casts the floating ones
 * to a floating dtype. Handles obtained before keep pointing at the module's
 * tensors, which now hold the moved data; gradients are dropped. */
KILN_API kiln_status kiln_module_to(kiln_module* m, kiln_device_type device, int device_index);
KILN_API kiln_status kiln_module_cast(kiln_module* m, kiln_dtype dtype);

/* ---- optimizers and learning-rate schedules ------------------------------------------- */

/* An optimizer of a registered type ("SGD", "Adam", ...) over `params`, the
 * first parameter group, with hyper-parameters `hyper` (names and defaults
 * per type; "lr" in every one). */
KILN_API kiln_status kiln_optimizer_create(kiln_runtime* rt, const char* type, kiln_tensor* const* params,
                                           size_t n_params, const kiln_attr* hyper, size_t n_hyper,
                                           kiln_optimizer** out);
/* Another parameter group: hyper-parameters not given take the values given
 * at creation. A parameter may belong to one group only. */
KILN_API kiln_status kiln_optimizer_add_group(kiln_optimizer* opt, kiln_tensor* const* params, size_t n_params,
                                              const kiln_attr* hyper, size_t n_hyper);
KILN_API void kiln_optimizer_retain(kiln_optimizer* opt);
KILN_API void kiln_optimizer_release(kiln_optimizer* opt);

/* One update of every parameter that has a gradient (parameters without
 * one are skipped and their state is left as it is). Runs without
 * recording gradients. */
KILN_API kiln_status kiln_optimizer_step(kiln_optimizer* opt);
/* Drops every parameter's gradient. */
KILN_API kiln_status kiln_optimizer_zero_grad(kiln_optimizer* opt);

KILN_API kiln_status kiln_optimizer_group_count(const kiln_optimizer* opt, size_t* out);
/* A group's hyper-parameter by name ("lr", "weight_decay", ...): numbers only. */
KILN_API kiln_status kiln_optimizer_get_hyper(const kiln_optimizer* opt, size_t group, const char* name, double* out);
KILN_API kiln_status kiln_optimizer_set_hyper(kiln_optimizer* opt, size_t group, const char* name, double value);
/* Steps taken (kiln_optimizer_step calls). */
KILN_API kiln_status kiln_optimizer_step_count(const kiln_optimizer* opt, int64_t* out);

/* The state as named tensors: "step" (an i64 scalar), and
 * "<parameter index>.<name>" for each parameter's state ("0.exp_avg").
 * *name is valid until the next step or load; *out is a new reference on a
 * copy. kiln_optimizer_state_load takes such a list back (from the same
 * optimizer type over parameters of the same shapes): every entry must be
 * present and fit, or nothing is changed. */
KILN_API kiln_status kiln_optimizer_state_count(const kiln_optimizer* opt, size_t* out);
KILN_API kiln_status kiln_optimizer_state_get(const kiln_optimizer* opt, size_t index, const char** name,
                                              kiln_tensor** out);
KILN_API kiln_status kiln_optimizer_state_load(kiln_optimizer* opt, const char* const* names,
                                               kiln_tensor* const* tensors, size_t n);

/* A learning-rate schedule of a registered type ("step", "cosine", ...). */
KILN_API kiln_status kiln_lr_schedule_create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                             size_t n_config, kiln_lr_schedule** out);
KILN_API void kiln_lr_schedule_release(kiln_lr_schedule* s);
/* The learning rate at `step` (0 is the first) for a base rate `base_lr`. */
KILN_API kiln_status kiln_lr_schedule_lr(const kiln_lr_schedule* s, int64_t step, double base_lr, double* out);

/* ---- data sources, examples and transforms ------------------------------------------------ */

/* An example: named CPU tensors ("input", "target", ...). */
KILN_API kiln_status kiln_example_create(kiln_runtime* rt, kiln_example** out);
KILN_API void kiln_example_release(kiln_example* ex);
/* Sets (or replaces) the field `name`; the example takes its own reference. */
KILN_API kiln_status kiln_example_set(kiln_example* ex, const char* name, kiln_tensor* t);
/* A new reference on the field `name`; KILN_ERR_NOT_FOUND when it has none. */
KILN_API kiln_status kiln_example_get(const kiln_example* ex, const char* name, kiln_tensor** out);
KILN_API kiln_status kiln_example_field_count(const kiln_example* ex, size_t* out);
/* *name is valid until the example changes or is released. */
KILN_API kiln_status kiln_example_field(const kiln_example* ex, size_t index, const char** name, kiln_tensor** out);

/* A data source of a registered type ("idx", "cifar10", "npy", "csv",
 * "tensors", "synthetic"); it reads or checks its files when created, so a
 * missing, truncated or malformed file fails here with the reason. */
KILN_API kiln_status kiln_data_source_create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                             size_t n_config, kiln_data_source** out);
KILN_API void kiln_data_source_release(kiln_data_source* src);
KILN_API kiln_status kiln_data_source_length(const kiln_data_source* src, int64_t* out);
/* Example `index` (0 <= index < length) as a new example. Safe to call from
 * several threads at once. */
KILN_API kiln_status kiln_data_source_get(const kiln_data_source* src, int64_t index, kiln_example** out);

/* A transform of a registered type ("to_float", "normalize", "random_crop",
 * "random_hflip", "one_hot"). */
KILN_API kiln_status kiln_transform_create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                           size_t n_config, kiln_transform** out);
KILN_API void kiln_transform_release(kiln_transform* tr);
/* Transforms `ex` in place. Random transforms draw from `seed` only, so an
 * example gets the same result for the same seed on any thread. */
KILN_API kiln_status kiln_transform_apply(const kiln_transform* tr, kiln_example* ex, uint64_t seed);

/* ---- loaders: the input pipeline ----------------------------------------------------- */

/* A loader turns a data source into batches: it orders the examples (a
 * seeded shuffle per epoch, or in order), keeps this process's shard, runs
 * the transforms on worker threads, stacks each field of `batch_size`
 * examples into one tensor ("input" f32[B, ...], "target" i64[B]) assembled
 * in place, and keeps up to
 * `prefetch` batches ready ahead of the training loop.
 *
 * Determinism: the batches of an epoch, and every random choice of the
 * transforms (each example is transformed with a seed made from the
 * loader's seed, the epoch and the example's index), depend only on the
 * options and the epoch, never on the number of workers or on timing. */

/* Set `size` to sizeof(kiln_loader_options); initialise by name. */
typedef struct kiln_loader_options {
  size_t size;
  int64_t batch_size; /* > 0 */
  int shuffle;        /* nonzero: a new seeded order every epoch */
  uint64_t seed;
  int drop_last;      /* nonzero: the last, smaller batch of an epoch is dropped */
  int rank;           /* this process's shard: examples i with i % world_size == rank of the */
  int world_size;     /* epoch's order (after shuffling); 0 or 1: no sharding */
  int num_workers;    /* threads running get + transforms; 0: on the calling thread */
  int prefetch;       /* batches made ahead; 0: 2 per worker (at least 2) */
  kiln_device_type device; /* where batches are delivered (copied on a side stream on CUDA) */
  int device_index;
} kiln_loader_options;

/* `transforms` (n_transforms, may be NULL when 0) run in order on each
 * example. The loader takes references on the source and the transforms. */
KILN_API kiln_status kiln_loader_create(kiln_data_source* source, kiln_transform* const* transforms,
                                        size_t n_transforms, const kiln_loader_options* options,
                                        kiln_loader** out);
/* Adds a reference (a trainer holding its loaders). NULL does nothing. */
KILN_API void kiln_loader_retain(kiln_loader* loader);
/* Drops a reference; the last one stops the workers (waiting for them) and
 * drops the loader. */
KILN_API void kiln_loader_release(kiln_loader* loader);

/* Examples and batches in one epoch of this shard. */
KILN_API kiln_status kiln_loader_length(const kiln_loader* loader, int64_t* num_examples, int64_t* num_batches);

/* Starts epoch `epoch` (0, 1, ...): abandons what is left of the current
 * one and begins making the new epoch's batches. */
KILN_API kiln_status kiln_loader_start_epoch(kiln_loader* loader, int64_t epoch);
/* The same, starting at batch `first_batch` of the epoch (0 <= first_batch
 * <= the number of batches): the batches before it are skipped without
 * being made, and the rest are exactly those an uninterrupted epoch would
 * deliver. A resumed run continues with it. */
KILN_API kiln_status kiln_loader_start_epoch_at(kiln_loader* loader, int64_t epoch, int64_t first_batch);

/* The next batch of the current epoch as a new example (its fields are the
 * stacked fields of the examples), or *out = NULL when the epoch is over.
 * Blocks until the batch is ready; the time spent waiting is measured. A
 * failure in a worker (a corrupt example, a failing transform) is returned
 * here with the example's index, and the epoch ends. */
KILN_API kiln_status kiln_loader_next(kiln_loader* loader, kiln_example** out);

/* Set `size` first; only fields within it are written. */
typedef struct kiln_loader_stats {
  size_t size;
  int64_t batches;            /* delivered since creation */
  double last_wait_seconds;   /* the last kiln_loader_next's wait for its batch */
  double total_wait_seconds;
  int64_t max_ready;          /* most batches ever waiting ready at once (<= prefetch) */
} kiln_loader_stats;
KILN_API kiln_status kiln_loader_stats_get(const kiln_loader* loader, kiln_loader_stats* out);

/* ---- the trainer ----------------------------------------------------------------------- */

/* A training loop that runs in C++: forward, loss, backward (gradient
 * accumulation, clipping by norm), the strategy's gradient reduction, the
 * optimizer step and the schedule, evaluation, progress output and metrics.
 * Hosts that own their loop call kiln_trainer_step; others call
 * kiln_trainer_run. */

/* What one optimizer step did. */
typedef struct kiln_step_metrics {
  size_t size;
  int64_t step;       /* optimizer steps taken, this one included */
  int64_t epoch;      /* 0-based */
  int64_t epoch_step; /* steps taken in this epoch, this one included */
  int64_t samples;    /* examples in this step (over its accumulated micro-batches) */
  double loss;        /* mean loss of the step's micro-batches */
  double lr;          /* the first group's learning rate used by this step */
  double grad_norm;   /* total gradient norm before clipping (0 when not computed) */
  double step_seconds;
  double input_wait_seconds;
  double samples_per_second; /* over the current epoch so far */
} kiln_step_metrics;

typedef struct kiln_eval_metrics {
  size_t size;
  int64_t step;
  int64_t epoch;
  int64_t samples;
  double loss;     /* mean over the samples */
  double accuracy; /* argmax over the last dim against an integer target; -1 when targets are not class indices */
  double seconds;
} kiln_eval_metrics;

/* Callbacks; a nonzero return stops training after the current step (the
 * trainer then returns KILN_OK). `metrics` is valid during the call.
 * A callback that fails reports it by recording an error with kiln_error_set
 * during the call and returning nonzero, best both at once:
 *   return kiln_error_set(KILN_ERR_IO, "cannot write the checkpoint");
 * The trainer clears this thread's last error before each call, stops, and
 * returns the status the callback returned with the message it recorded, as
 * they are. A callback that records an error but returns a value that is not
 * a kiln_status makes the trainer return KILN_ERR_INVALID_STATE ("stopped by
 * on_step, which returned ...", with the message). on_step runs after the
 * step's metrics line is written; after the epoch's last step, evaluation
 * (in kiln_trainer_run) and then on_epoch follow it. */
typedef int (*kiln_step_fn)(void* user_data, const kiln_step_metrics* metrics);
typedef int (*kiln_eval_fn)(void* user_data, const kiln_eval_metrics* metrics);
typedef int (*kiln_epoch_fn)(void* user_data, int64_t epoch, const kiln_step_metrics* last_step);

/* Set `size` to sizeof(kiln_trainer_options); initialise by name. */
typedef struct kiln_trainer_options {
  size_t size;
  kiln_module* model;          /* required */
  const char* loss;            /* an op taking (output, target): "cross_entropy" (default), "mse_loss", "nll_loss", "bce_with_logits" */
  kiln_optimizer* optimizer;   /* required */
  kiln_lr_schedule* schedule;  /* optional: the rate of every group is schedule(step, group's base lr) */
  kiln_loader* train;          /* required */
  kiln_loader* validation;     /* optional */
  kiln_strategy* strategy;     /* optional: NULL is one process */
  int64_t epochs;              /* 0 with max_steps > 0: as many as max_steps needs */
  int64_t max_steps;           /* 0: no limit but epochs */
  int64_t accumulate;          /* micro-batches per optimizer step (default 1) */
  double clip_grad_norm;       /* > 0: clip the total gradient norm to it */
  int64_t eval_every;          /* steps between evaluations; 0: after every epoch */
  int64_t log_every;           /* steps between plain progress lines off a terminal (default 50) */
  int progress;                /* 0: a live bar on a terminal, plain lines otherwise; 1: the bar; 2: lines; 3: quiet */
  const char* metrics_path;    /* JSON lines of every step and evaluation; NULL: none. Written as the run goes. */
  const char* input_field;     /* default "input" */
  const char* target_field;    /* default "target" */
  kiln_step_fn on_step;
  kiln_eval_fn on_eval;
  kiln_epoch_fn on_epoch;
  void* user_data;
  int64_t checkpoint_every;    /* > 0: kiln_trainer_save(checkpoint_path) after every this many steps */
  const char* checkpoint_path; /* required when checkpoint_every > 0 */
} kiln_trainer_options;

/* The trainer takes references on the objects in `options` that have a
 * retain function (the model, the optimizer, the loaders); the schedule and
 * the strategy, which have none, must outlive the trainer. A step takes
 * its micro-batches from one epoch: the last step of an epoch may have fewer
 * than `accumulate` (their losses are then averaged over those it has).
 * Gradients are reduced by the strategy before they are clipped, so that
 * every process clips the same gradient. */
KILN_API kiln_status kiln_trainer_create(kiln_runtime* rt, const kiln_trainer_options* options, kiln_trainer** out);
KILN_API void kiln_trainer_release(kiln_trainer* trainer);
/* One optimizer step (starting epochs as needed). *done = 1 when training
 * is over (epochs or max_steps reached, or a callback asked to stop); then
 * nothing was done. `metrics` may be NULL. */
KILN_API kiln_status kiln_trainer_step(kiln_trainer* trainer, kiln_step_metrics* metrics, int* done);
/* Steps until done, evaluating as configured. */
KILN_API kiln_status kiln_trainer_run(kiln_trainer* trainer);
/* One pass over the validation loader (or `loader` when not NULL) in eval
 * mode without gradients; the model's mode is restored afterwards. */
KILN_API kiln_status kiln_trainer_evaluate(kiln_trainer* trainer, kiln_loader* loader, kiln_eval_metrics* out);
/* One evaluation pass of `model` over `loader` without a trainer, as
 * kiln_trainer_evaluate does it: the model reads the batch field
 * `input_field` (NULL: "input"), the loss op `loss` (NULL: "cross_entropy")
 * takes (output, field `target_field` (NULL: "target")); step and epoch
 * are 0, and nothing is logged. */
KILN_API kiln_status kiln_evaluate(kiln_module* model, kiln_loader* loader, const char* loss, const char* input_field,
                                   const char* target_field, kiln_eval_metrics* out);

/* ---- checkpoints ----------------------------------------------------------------------- */

/* Checkpoints are safetensors files: a little-endian u64 header length, a
 * JSON header naming each tensor's dtype, shape and byte range, then the
 * tensors' bytes. Nothing in them is ever executed. Every file is written
 * atomically: into a temporary file beside `path`, flushed to disk, renamed
 * over `path`, then the directory is flushed. A failed save (a read-only
 * or full location, a process killed midway) leaves whatever was at `path`
 * before untouched and reports the error; no partial file ever takes the
 * final name.
 *
 * Reading validates the whole header before anything is read or changed:
 * a truncated file, a header length beyond the file, a header that is not
 * JSON or not a safetensors header, an unknown dtype, a shape whose size
 * overflows, byte ranges that do not match the shape, overlap, leave gaps
 * or stop short of the end of the file, and a name given twice each fail
 * with KILN_ERR_IO and a message saying which. Nothing larger than the file
 * is ever allocated. */

/* Writes the fields of `tensors` (any device; copied to the host as needed)
 * under their names. */
KILN_API kiln_status kiln_safetensors_save(const kiln_example* tensors, const char* path);
/* Reads every tensor of a safetensors file into a new example (CPU tensors,
 * fields in the file's order). */
KILN_API kiln_status kiln_safetensors_load(kiln_runtime* rt, const char* path, kiln_example** out);

/* Weights: the parameters and buffers of `model` under their dotted names,
 * the names PyTorch's state_dict gives the same model ("0.weight",
 * "conv1.bias", "1.running_mean"), each in its own dtype. */
KILN_API kiln_status kiln_weights_save(kiln_module* model, const char* path);
/* Loads a weights file into `model`: each parameter and buffer takes the
 * tensor of its name, converted to its dtype and copied to its device.
 * Shapes must match. strict != 0: the file must hold exactly the model's
 * names (PyTorch's strict=True); otherwise names only one side has are
 * skipped. The names that do not match are listed in the error. All or
 * nothing: on any error the model is unchanged. */
KILN_API kiln_status kiln_weights_load(kiln_module* model, const char* path, int strict);

/* The full training state of `trainer`, enough to continue exactly where it
 * stands: the model's parameters and buffers (named "model.<name>"), the
 * optimizer's state ("optimizer.<entry>", see kiln_optimizer_state_get),
 * each group's learning rate, the step, the epoch and the position in it
 * (the train loader resumes at the next batch), the runtime's random
 * stream, and a manifest of the kiln version and of every loaded plugin's
 * name and version. On the CPU, a run that saves, restarts and loads takes
 * the same steps with bit-identical losses and parameters as one that never
 * stopped. */
KILN_API kiln_status kiln_trainer_save(kiln_trainer* trainer, const char* path);
/* Restores a state written by kiln_trainer_save into a trainer made with
 * the same model structure, optimizer and loaders. A path that does not
 * exist is an error (never a silent fresh start); a file that is not a
 * training state, or whose tensors do not fit the model or the optimizer,
 * fails naming what differs, and leaves the trainer, the model and the
 * optimizer unchanged. Plugins named in the manifest that are missing or
 * of another version are reported as warnings on the log. */
KILN_API kiln_status kiln_trainer_load(kiln_trainer* trainer, const char* path);

/* ---- parallel strategies ---------------------------------------------------------------- */

/* A strategy of a registered type ("single": one process, nothing to do). */
KILN_API kiln_status kiln_strategy_create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                          size_t n_config, kiln_strategy** out);
KILN_API void kiln_strategy_release(kiln_strategy* s);
KILN_API kiln_status kiln_strategy_rank(const kiln_strategy* s, int* rank, int* world_size);
/* Called after backward and before the optimizer step: makes the
 * gradients of `params` agree across the processes of the strategy. */
KILN_API kiln_status kiln_strategy_reduce_gradients(kiln_strategy* s, kiln_tensor* const* params, size_t n_params);


#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_H */
