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
 * atomic. Grad mode (kiln_no_grad_begin/end) and autocast
 * (kiln_autocast_begin/end) are per runtime and per thread.
 *
 * kiln.h also brings in, under the same rules, kiln_training.h (data
 * sources, loaders, the trainer, checkpoints and parallel strategies),
 * kiln_profiler.h (time per op), kiln_op_listing.h (the ops a runtime has,
 * with their schemas) and kiln_dist.h (process groups).
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
  /* CPU kernel threads, kiln's own pool and oneDNN's OpenMP pool alike;
   * 0: KILN_NUM_THREADS when set (kiln launch gives each rank its share of
   * the cores there), else one per hardware thread. */
  int num_threads;
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
  int direct_convolutions;  /* nonzero: f32 convolutions on the CPU use direct kernels only. Zero (the
                               default): stride-1 ones may use Winograd's algorithm, as cuDNN does on a
                               GPU: kiln's for 3x3 and 5x5 on CPUs with AVX2 or AVX-512 (16 channels
                               or more, 128 tiles or more), else oneDNN's for 3x3 filters where it
                               judges it faster (AVX-512 CPUs); its largest error, 2e-6 to 1e-5 of
                               the largest value, is a few times the direct kernels' */
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
 * Both allocators cache: freed blocks stay reserved for reuse, so
 * reserved_bytes stays above current_bytes until kiln_memory_empty_cache.
 * The GPU's carves blocks from segments (requests rounded up to 512 bytes);
 * the CPU's keeps freed blocks of 32 KiB or more whole, for the next request
 * of the same size, and never more of them than twice the most bytes that
 * were in use at once (smaller blocks go straight back to malloc). The fields after
 * num_frees describe the cache; for the CPU, num_reserves and num_releases
 * count its blocks taken from and given back to the system. */
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
  int64_t limit_bytes;        /* cap on reserved_bytes (KILN_CUDA_MEMORY_FRACTION, kiln_memory_set_limit); 0: none */
  double fragmentation;       /* 1 - largest_free_block / cached_free_bytes; 0 when nothing is cached */
} kiln_memory_stats;

/* `out` is owned by the caller and written during the call. */
KILN_API kiln_status kiln_memory_stats_get(kiln_runtime* rt, kiln_device_type device, int device_index,
                                           kiln_memory_stats* out);

/* Gives the cached memory of one device's allocator that no tensor uses
 * back to the device or the system (for memory another library or process
 * needs); it is reserved again when needed. */
KILN_API kiln_status kiln_memory_empty_cache(kiln_runtime* rt, kiln_device_type device, int device_index);

/* Starts peak_bytes of one device's allocator again from current_bytes, to
 * measure the peak of what follows (a step, a trial forward and backward). */
KILN_API kiln_status kiln_memory_reset_peak(kiln_runtime* rt, kiln_device_type device, int device_index);

/* Caps the memory the runtime's CPU allocator holds at once, its cached
 * blocks included, at `limit_bytes` (0 removes the cap). A request that
 * would go over first empties the cache; one that would still go over fails
 * with KILN_ERR_OUT_OF_MEMORY and a message naming the cap, as when the
 * system refuses, and whatever was computing fails cleanly. Shown as
 * limit_bytes in the CPU's statistics. A GPU's cap is set when the runtime
 * starts (KILN_CUDA_MEMORY_FRACTION): for a GPU this is
 * KILN_ERR_UNSUPPORTED. */
KILN_API kiln_status kiln_memory_set_limit(kiln_runtime* rt, kiln_device_type device, int device_index,
                                           int64_t limit_bytes);

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
/* Replaces the gradient of `t` (a leaf that requires grad) with a copy of
 * `grad` (same shape, dtype and device), or drops it when `grad` is NULL. */
KILN_API kiln_status kiln_tensor_set_grad(kiln_tensor* t, const kiln_tensor* grad);
/* Gradient-ready hooks of a leaf that requires grad (a parameter): `fn`
 * runs on the thread running backward each time a backward pass has summed
 * every contribution into the leaf's gradient, while the rest of backward
 * still has to run. Data-parallel training starts reducing a gradient
 * there. *id identifies the hook for kiln_tensor_remove_grad_hook. Hooks
 * belong to the tensor's current data: a module moved to another device or
 * cast afterwards has new parameter data, without them. */
KILN_API kiln_status kiln_tensor_add_grad_hook(kiln_tensor* t, kiln_grad_hook_fn fn, void* user, uint64_t* id);
KILN_API kiln_status kiln_tensor_remove_grad_hook(kiln_tensor* t, uint64_t id);
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

/* ---- autocast (mixed precision) ------------------------------------------------ */

/* Mixed precision for this runtime on this thread until the matching end,
 * as PyTorch's autocast does it; `dtype` is KILN_BF16 or KILN_F16 (any
 * other is KILN_ERR_INVALID_ARGUMENT naming it). Inside a scope, every op
 * call casts its floating inputs first, by the op's category:
 * - matrix products and convolutions (matmul, linear, conv2d) cast f32
 *   inputs down to `dtype` and give their results in it; they accumulate
 *   in f32;
 * - ops that need the range or the precision (softmax, log_softmax, the
 *   losses, layer_norm, batch_norm, exp, log, pow, sum, mean, var, std,
 *   prod, cumsum, norm, logsumexp) cast 16-bit inputs up to KILN_F32;
 * - every other op (plugin ops too) computes in the widest floating dtype
 *   of its inputs when they differ, and in f32 when it has no kernel for a
 *   16-bit input on that device.
 * f64 inputs are never narrowed. Parameters stay as they are: the casts
 * are recorded like any op, so a f32 parameter's gradient comes back f32.
 * kiln_backward runs with autocast off wherever it is called (backward ops
 * use the dtypes the forward recorded); wrap the forward and the loss only.
 * Scopes nest, the innermost deciding; each begin needs one end on the
 * same thread. On the CPU, bf16 needs an AVX-512 CPU (fast with
 * AVX512_BF16 or AMX, emulated and slower without); a product that cannot
 * run fails with KILN_ERR_UNSUPPORTED saying why. oneDNN 2.6 has no f16
 * products on CPUs: use KILN_BF16 there, KILN_F16 on GPUs. */
KILN_API kiln_status kiln_autocast_begin(kiln_runtime* rt, kiln_dtype dtype);
/* Closes the innermost scope; KILN_ERR_INVALID_STATE when none is open on this thread. */
KILN_API kiln_status kiln_autocast_end(kiln_runtime* rt);
/* *out = the dtype of the innermost open scope on this thread, KILN_F32 when none is. */
KILN_API kiln_status kiln_autocast_dtype(kiln_runtime* rt, kiln_dtype* out);

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
typedef enum kiln_registration_kind KILN_ENUM_INT {
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
/* The configuration schema of a registered type, as its plugin declared
 * it: a layer's entries, an optimizer's hyper-parameters, a data source's,
 * a transform's, a schedule's or a strategy's options (ops have attributes
 * instead: KILN_ERR_UNSUPPORTED). Entry `index` (< *count) gives its name,
 * type and default value in *entry, whether it is required, and what it
 * means (*doc, may be ""); pointers stay valid until the plugin is
 * unloaded. An unknown name is KILN_ERR_NOT_FOUND. */
KILN_API kiln_status kiln_registration_config_count(kiln_runtime* rt, kiln_registration_kind kind,
                                                    const char* name, size_t* count);
KILN_API kiln_status kiln_registration_config_entry(kiln_runtime* rt, kiln_registration_kind kind,
                                                    const char* name, size_t index, kiln_attr* entry,
                                                    int* required, const char** doc);

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

/* Activation checkpointing: a container that runs `inner` (it takes its own
 * reference) without keeping the intermediate values of its forward for
 * backward. Its forward records one tape entry holding the inputs and the
 * position of the random stream; backward runs `inner`'s forward again with
 * recording on, from that position (dropout draws the same masks), and
 * back-propagates through it. Gradients equal the unwrapped module's bit for
 * bit; the activation memory of `inner` is held only during its own part of
 * backward, for the price of a second forward. Without recording (eval,
 * no-grad, nothing requiring grad) it is `inner`'s plain forward. Its
 * parameters and buffers keep the names they have in `inner` ("weight",
 * "0.bias"): a weights file is the same with and without the wrapper.
 * Backward replays `inner` as it is then: switching train/eval or changing
 * parameters between forward and backward changes what is replayed. */
KILN_API kiln_status kiln_module_checkpoint(kiln_runtime* rt, kiln_module* inner, kiln_module** out);

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
 * order, with dotted names ("0.weight", "block.self_attn.in_proj_bias"). *name is valid
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

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Data, the trainer, checkpoints and strategies. */
#include "kiln/kiln_training.h"
/* Looking inside a runtime: time per op, and the ops it has. */
#include "kiln/kiln_profiler.h"
#include "kiln/kiln_op_listing.h"
#include "kiln/kiln_dist.h"

#endif /* KILN_KILN_H */
