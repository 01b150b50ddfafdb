/*
 * kiln_plugin.h: the plugin API of kiln, in plain C.
 *
 * A plugin is a shared library that adds layer types, ops, optimizers,
 * learning-rate schedules, data sources, transforms or parallel strategies to
 * a kiln runtime. It exports exactly one symbol, kiln_plugin_entry, and never
 * links libkiln.so: everything it needs from the runtime comes through the
 * host table (kiln_host) handed to its register function, so the same binary
 * works in any process that embeds kiln. kiln's own layers, optimizers and
 * data sources are plugins written against this header alone.
 *
 * A complete plugin: a layer "Scale" that multiplies its input by a learnable
 * scalar. Its forward is made of host ops, so it runs on every device and
 * its backward comes for free.
 *
 *   #include <stdlib.h>
 *   #include <kiln/kiln_plugin.h>
 *
 *   static const kiln_host* host;
 *
 *   typedef struct { kiln_tensor* alpha; const kiln_op* mul; } scale_state;
 *
 *   static kiln_status scale_create(void* user, kiln_layer_init* init, const kiln_attr* config,
 *                                   size_t n_config, void** state) {
 *     (void)user; (void)n_config;
 *     scale_state* s = calloc(1, sizeof *s);
 *     if (!s) return host->error(KILN_ERR_OUT_OF_MEMORY, "Scale: no memory for its state");
 *     kiln_runtime* rt = host->layer_init_runtime(init);
 *     kiln_status st = host->op_find(rt, "mul", &s->mul);
 *     if (st == KILN_OK) st = host->tensor_full(rt, NULL, 0, config[0].value.f, KILN_F32, KILN_DEVICE_CPU, 0, &s->alpha);
 *     if (st == KILN_OK) st = host->layer_add_parameter(init, "alpha", s->alpha);
 *     if (st != KILN_OK) { host->tensor_release(s->alpha); free(s); return st; }
 *     *state = s;
 *     return KILN_OK;
 *   }
 *
 *   static kiln_status scale_forward(void* state, const kiln_layer_call* call) {
 *     scale_state* s = state;
 *     kiln_tensor* args[2] = {call->inputs[0], s->alpha};
 *     return host->op_call1(call->runtime, s->mul, args, 2, NULL, 0, &call->outputs[0]);
 *   }
 *
 *   static void scale_destroy(void* state) {
 *     scale_state* s = state;
 *     host->tensor_release(s->alpha);
 *     free(s);
 *   }
 *
 *   static kiln_status register_plugin(const kiln_host* h, kiln_registrar* registrar) {
 *     host = h;
 *     static const kiln_attr_spec config[] = {{{"init", KILN_ATTR_FLOAT, {.f = 1.0}}, 0, "initial value"}};
 *     const kiln_layer_type scale = {.size = sizeof(kiln_layer_type), .name = "Scale",
 *                                    .config = config, .n_config = 1, .create = scale_create,
 *                                    .forward = scale_forward, .destroy = scale_destroy};
 *     return host->register_layer(registrar, &scale);
 *   }
 *
 *   KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
 *     static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0),
 *                                              "scale", "1.0.0", register_plugin};
 *     return &d;
 *   }
 *
 * Build it as a shared library with hidden visibility
 * (-fvisibility=hidden), so that only kiln_plugin_entry is exported, and load
 * it with kiln_plugin_load(rt, "libscale.so") or by putting it on
 * KILN_PLUGIN_PATH. examples/plugin/ shows a plugin with its own op (a CPU
 * kernel and a backward) and an optimizer, built against an installed kiln.
 *
 * Rules:
 * - The host calls kiln_plugin_entry, checks the ABI range, then calls
 *   `register_fn` once per runtime that loads the plugin. Nothing of the
 *   plugin runs before, and nothing registers itself from a static
 *   initializer.
 * - The host table stays valid while the library is loaded, and every
 *   runtime's table holds the same functions, so keeping it in a static (as
 *   above) is safe; only its `runtime` member differs between runtimes.
 * - Every function of the host table follows kiln.h's rules: kiln_status
 *   results, references given to the caller, NULL releases are no-ops. A
 *   plugin callback reports a failure by returning host->error(status,
 *   message); the host adds the plugin's and the object's names.
 * - Type structs (kiln_layer_type, ...) are copied at registration, and so
 *   are the strings and arrays they point to; `user` pointers are given back
 *   to every callback and must stay valid while the plugin is loaded.
 * - Objects a plugin creates (layer states, optimizer states, sources) each
 *   hold a reference on the plugin: the library stays loaded until the last
 *   is destroyed. No C++ type, exception or allocation crosses the table: a
 *   plugin written in C++ catches its exceptions in every callback.
 * - Callbacks of data sources and transforms may run on several threads at
 *   once; other callbacks run on the thread that called the runtime.
 */
#ifndef KILN_KILN_PLUGIN_H
#define KILN_KILN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/kiln_types.h"

#ifdef __cplusplus
#  define KILN_PLUGIN_EXTERN_C extern "C"
extern "C" {
#else
#  define KILN_PLUGIN_EXTERN_C
#endif

#if defined(_WIN32)
#  define KILN_PLUGIN_EXPORT KILN_PLUGIN_EXTERN_C __declspec(dllexport)
#else
#  define KILN_PLUGIN_EXPORT KILN_PLUGIN_EXTERN_C __attribute__((visibility("default")))
#endif

/* ---- versions ------------------------------------------------------------------ */

/* A plugin ABI version: within one major version the host table and every
 * type struct only grow at their end, so a plugin built for 1.0 works on a
 * 1.3 host. A new major version may change anything. */
#define KILN_PLUGIN_ABI(major, minor) ((((uint32_t)(major)) << 16) | ((uint32_t)(minor)))
#define KILN_PLUGIN_ABI_MAJOR(v) ((uint32_t)(v) >> 16)
#define KILN_PLUGIN_ABI_MINOR(v) ((uint32_t)(v)&0xFFFFu)
/* The version this header describes. */
#define KILN_PLUGIN_ABI_CURRENT KILN_PLUGIN_ABI(1, 1)

/* True when the host table `host` has the member `field` (fields added in a
 * later minor version than the host's are missing). */
#define KILN_HOST_HAS(host, field) (offsetof(kiln_host, field) + sizeof((host)->field) <= (host)->size)

typedef struct kiln_host kiln_host;
/* Where a plugin's registrations go; valid during register_fn only. */
typedef struct kiln_registrar kiln_registrar;

typedef kiln_status (*kiln_plugin_register_fn)(const kiln_host* host, kiln_registrar* registrar);

/* What kiln_plugin_entry returns. The host reads it before anything else:
 * the ABI range must contain a version the host has ([abi_min, abi_max]),
 * or the plugin is refused without register_fn being called. The host picks
 * the highest version both have and tells it in host->abi_version. The
 * descriptor and its strings must live as long as the library. */
typedef struct kiln_plugin_descriptor {
  size_t size; /* sizeof(kiln_plugin_descriptor) */
  uint32_t abi_min;
  uint32_t abi_max;
  const char* name;    /* unique among a runtime's plugins: "kiln-layers" */
  const char* version; /* the plugin's own version: "1.2.0" */
  kiln_plugin_register_fn register_fn;
} kiln_plugin_descriptor;

/* The one symbol a plugin exports:
 *   KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void); */
typedef const kiln_plugin_descriptor* (*kiln_plugin_entry_fn)(void);
#define KILN_PLUGIN_ENTRY_SYMBOL "kiln_plugin_entry"

/* ---- configuration schemas ----------------------------------------------------------- */

/* One entry of a configuration or attribute schema: its name, type and
 * default value (in `attr`), whether callers must give it, and a line of
 * documentation (shown by `kiln plugins`). Callbacks receive configurations
 * checked against the schema, in schema order, defaults filled in: entry i
 * of the array they get is entry i of the schema. A required tensor entry
 * has no default; an optional one may be NULL. */
typedef struct kiln_attr_spec {
  kiln_attr attr;
  int required;
  const char* doc;
} kiln_attr_spec;

/* ---- ops with their own kernels -------------------------------------------------------- */

/* Given to a kernel: where and with what it runs. Only the runtime's
 * resources are used: a plugin never creates its own stream, handle or pool. */
typedef struct kiln_kernel_context {
  size_t size;
  kiln_runtime* runtime;
  kiln_device_type device;
  int device_index;
  void* stream;      /* cudaStream_t of the runtime on CUDA; NULL on the CPU */
  void* blas_handle; /* cublasHandle_t on CUDA; NULL on the CPU */
  void* dnn_handle;  /* cudnnHandle_t on CUDA; NULL on the CPU */
  int num_threads;   /* CPU threads of host->parallel_for */
} kiln_kernel_context;

/* Inputs reach a kernel contiguous, on the kernel's device; outputs are
 * allocated by the host, contiguous, as the op's infer said, and the kernel
 * writes every element. host->tensor_address gives the data of either.
 * `attrs` follow the op's schema (see kiln_attr_spec). */
typedef struct kiln_kernel_call {
  size_t size;
  const kiln_kernel_context* context;
  kiln_tensor* const* inputs;
  size_t n_inputs;
  kiln_tensor* const* outputs;
  size_t n_outputs;
  const kiln_attr* attrs;
  size_t n_attrs;
} kiln_kernel_call;

typedef kiln_status (*kiln_kernel_fn)(void* user, const kiln_kernel_call* call);

/* The shapes and dtypes of an op's outputs from its inputs': fill
 * outputs[0 .. n_outputs), or fail with a message that says what was
 * received and what was expected. */
typedef struct kiln_infer_call {
  size_t size;
  const kiln_tensor_desc* inputs; /* an optional input left out has rank -1 */
  size_t n_inputs;
  const kiln_attr* attrs;
  size_t n_attrs;
  kiln_tensor_desc* outputs;
  size_t n_outputs;
} kiln_infer_call;

/* Gradients of an op's inputs from its outputs'. Runs with gradient
 * recording off; build the gradients from host ops (or ops of your own,
 * with kernels). Write a new reference into grad_inputs[i] for every input
 * with needs_input_grad[i], shaped like that input; leave the others NULL.
 * grad_outputs entries are defined for every floating output. */
typedef struct kiln_backward_call {
  size_t size;
  kiln_runtime* runtime;
  kiln_tensor* const* inputs; /* as given to the forward */
  size_t n_inputs;
  kiln_tensor* const* outputs;
  size_t n_outputs;
  kiln_tensor* const* grad_outputs;
  const kiln_attr* attrs;
  size_t n_attrs;
  const int* needs_input_grad;
  kiln_tensor** grad_inputs;
} kiln_backward_call;

typedef struct kiln_op_type {
  size_t size; /* sizeof(kiln_op_type) */
  const char* name;
  const char* const* input_names;
  size_t n_inputs;
  size_t n_outputs;
  const kiln_attr_spec* attrs; /* tensor attributes are not allowed in ops */
  size_t n_attrs;
  /* The dtypes the kernels take; the kernel runs for the dtype of input 0.
   * Under autocast (kiln_autocast_begin) the host casts a plugin op's
   * floating inputs to the widest of their dtypes, and to f32 when that is
   * bf16 or f16 and not listed here. */
  const kiln_dtype* dtypes;
  size_t n_dtypes;
  void* user;
  kiln_status (*infer)(void* user, const kiln_infer_call* call);
  /* Kernels per device; NULL where the op has none (the call then fails
   * saying so). */
  kiln_kernel_fn cpu_kernel;
  kiln_kernel_fn cuda_kernel;
  /* NULL: the outputs carry no gradient. */
  kiln_status (*backward)(void* user, const kiln_backward_call* call);
} kiln_op_type;

/* ---- layers ------------------------------------------------------------------------ */

/* Where a layer's create adds its parameters, buffers and sub-layers. */
typedef struct kiln_layer_init kiln_layer_init;

typedef struct kiln_layer_call {
  size_t size;
  kiln_runtime* runtime;
  int training; /* 1 in train mode, 0 in eval mode */
  kiln_tensor* const* inputs;
  size_t n_inputs;
  /* Write new references into outputs[0 .. max_outputs) and their number
   * into *n_outputs (already 1 when the layer leaves it). */
  kiln_tensor** outputs;
  size_t max_outputs;
  size_t* n_outputs;
} kiln_layer_call;

typedef struct kiln_layer_type {
  size_t size; /* sizeof(kiln_layer_type) */
  const char* name; /* "Linear" */
  const kiln_attr_spec* config;
  size_t n_config;
  void* user;
  /* Makes one layer: reads `config`, creates its parameters (CPU, f32,
   * initialised) and buffers and adds them with host->layer_add_parameter /
   * layer_add_buffer, and stores what forward needs in *state. A config
   * that makes no sense fails with a message naming the entry. */
  kiln_status (*create)(void* user, kiln_layer_init* init, const kiln_attr* config, size_t n_config, void** state);
  /* Computes the outputs from host ops (or ops the plugin registered). The
   * parameter handles the layer keeps follow the module when it is moved or
   * cast: the host swaps the tensor inside the same handle. */
  kiln_status (*forward)(void* state, const kiln_layer_call* call);
  void (*destroy)(void* state);
} kiln_layer_type;

/* ---- optimizers and schedules ---------------------------------------------------------------- */

/* Where an optimizer's init_state adds a parameter's state tensors. */
typedef struct kiln_optimizer_state_init kiln_optimizer_state_init;

/* One parameter's update. `hyper` follows the optimizer's schema with the
 * values of the parameter's group. Update `param` and `state` in place with
 * host->tensor_assign (or kernels of your own). */
typedef struct kiln_optimizer_update {
  size_t size;
  kiln_runtime* runtime;
  kiln_tensor* param;
  kiln_tensor* grad;
  kiln_tensor* const* state; /* in the order init_state added them */
  size_t n_state;
  const kiln_attr* hyper;
  size_t n_hyper;
  int64_t step; /* this parameter's update count, 1 for the first */
} kiln_optimizer_update;

/* Several parameters' update (see update_group below). */
typedef struct kiln_optimizer_group_update kiln_optimizer_group_update;

typedef struct kiln_optimizer_type {
  size_t size; /* sizeof(kiln_optimizer_type) */
  const char* name; /* "AdamW" */
  /* Per-group hyper-parameters; every optimizer has a number "lr". */
  const kiln_attr_spec* hyper;
  size_t n_hyper;
  void* user;
  /* Called before a parameter's first update: create its state tensors
   * (like `param`: same device) and add them with
   * host->optimizer_add_state. May add none. */
  kiln_status (*init_state)(void* user, kiln_optimizer_state_init* init, kiln_tensor* param, const kiln_attr* hyper,
                            size_t n_hyper);
  kiln_status (*update)(void* user, const kiln_optimizer_update* call);
  /* Optional (may be NULL): checks one group's hyper-parameters when the
   * optimizer is created, a group is added or a value is set, so that a
   * value that makes no sense (a negative "lr") fails there, naming the
   * entry, instead of at the first step. */
  kiln_status (*check_hyper)(void* user, const kiln_attr* hyper, size_t n_hyper);
  /* Optional (may be NULL), newer than the members above: updates several
   * parameters of one group in one call (a fused multi-tensor kernel). When
   * set, each optimizer step calls it once per group with the group's
   * parameters that have a gradient, their state made first; otherwise
   * `update` runs once per parameter. Both must compute the same values.
   * The host reads this member only when `size` covers it, so a plugin
   * built against a header without it keeps working. */
  kiln_status (*update_group)(void* user, const kiln_optimizer_group_update* call);
} kiln_optimizer_type;

/* The parameters of one group, for update_group: entry i of `params`,
 * `grads`, `states` and `steps` belongs to one parameter. `states[i]` holds
 * parameter i's state tensors in the order init_state added them; every
 * parameter of the call has at least n_state of them. `hyper` is the
 * group's. Steps advance (all of them) only when the call succeeds. */
struct kiln_optimizer_group_update {
  size_t size;
  kiln_runtime* runtime;
  size_t n_params;
  kiln_tensor* const* params;
  kiln_tensor* const* grads;
  kiln_tensor* const* const* states;
  size_t n_state;
  const kiln_attr* hyper;
  size_t n_hyper;
  const int64_t* steps; /* each parameter's update count, 1 for its first */
};

typedef struct kiln_lr_schedule_type {
  size_t size; /* sizeof(kiln_lr_schedule_type) */
  const char* name; /* "cosine" */
  const kiln_attr_spec* config;
  size_t n_config;
  void* user;
  kiln_status (*create)(void* user, const kiln_attr* config, size_t n_config, void** state);
  /* The rate at `step` (0 is the first) for the group's base rate: a pure
   * function of its arguments, so resuming at a step needs no saved state. */
  kiln_status (*lr)(void* state, int64_t step, double base_lr, double* out);
  void (*destroy)(void* state);
} kiln_lr_schedule_type;

/* ---- data ----------------------------------------------------------------------------------- */

typedef struct kiln_data_source_type {
  size_t size; /* sizeof(kiln_data_source_type) */
  const char* name; /* "idx" */
  const kiln_attr_spec* config;
  size_t n_config;
  void* user;
  /* Opens and checks the data (a missing, truncated or malformed file fails
   * here, naming the file and what is wrong). */
  kiln_status (*create)(void* user, kiln_runtime* runtime, const kiln_attr* config, size_t n_config, void** state);
  kiln_status (*length)(void* state, int64_t* out);
  /* Fills `out` (empty) with example `index` as CPU tensors, with
   * host->example_set. Called from several threads at once. */
  kiln_status (*get)(void* state, int64_t index, kiln_example* out);
  void (*destroy)(void* state);
} kiln_data_source_type;

typedef struct kiln_transform_type {
  size_t size; /* sizeof(kiln_transform_type) */
  const char* name; /* "random_crop" */
  const kiln_attr_spec* config;
  size_t n_config;
  void* user;
  kiln_status (*create)(void* user, kiln_runtime* runtime, const kiln_attr* config, size_t n_config, void** state);
  /* Changes `example` in place (host->example_get / example_set). Random
   * choices come from `seed` alone (see host->philox). Called from several
   * threads at once. */
  kiln_status (*apply)(void* state, kiln_example* example, uint64_t seed);
  void (*destroy)(void* state);
} kiln_transform_type;

/* ---- parallel strategies ---------------------------------------------------------------------- */

/* How training is spread over processes and devices: "single" (one process,
 * nothing to reduce), "ddp" (data parallel: every rank holds the whole
 * model and the gradients are averaged), "zero1" (ddp whose optimizer
 * state is sharded: each rank keeps and updates its share of the
 * parameters). A trainer calls, in order: attach once with its model; then
 * per optimizer step, for each micro-batch, backward_begin and the
 * backward itself; then reduce_gradients, clipping, step_begin, the
 * optimizer step and step_end. */
typedef struct kiln_strategy_type {
  size_t size; /* sizeof(kiln_strategy_type) */
  const char* name; /* "single" */
  const kiln_attr_spec* config;
  size_t n_config;
  void* user;
  kiln_status (*create)(void* user, kiln_runtime* runtime, const kiln_attr* config, size_t n_config, void** state);
  kiln_status (*rank)(void* state, int* rank, int* world_size);
  /* After backward, before the optimizer step: make the gradients of
   * `params` agree across processes. */
  kiln_status (*reduce_gradients)(void* state, kiln_tensor* const* params, size_t n_params);
  void (*destroy)(void* state);
  /* Optional (may be NULL), newer than the members above (ABI 1.1; the
   * host reads them only when `size` covers them). */
  /* When a trainer starts with `model`: make the ranks' parameters and
   * buffers agree and prepare for backward (gradient-ready hooks). */
  kiln_status (*attach)(void* state, kiln_module* model);
  /* Before each micro-batch's backward. `sync` is 1 when this micro-batch
   * is the last before an optimizer step and 0 when its gradients only
   * accumulate: nothing needs reducing then. */
  kiln_status (*backward_begin)(void* state, int sync);
  /* Optional (may be NULL), newer than the members above (the host reads
   * them only when `size` covers them): for a strategy that shards the
   * optimizer's state over the ranks. */
  /* The rank that keeps `param`'s optimizer state and updates it, or -1
   * when every rank does (a tensor the strategy does not shard). Saving a
   * training state gathers each parameter's state from its owner, and
   * loading one gives each rank only the state it owns. */
  kiln_status (*state_owner)(void* state, const kiln_tensor* param, int* owner);
  /* Right before the optimizer step, after the gradients were reduced and
   * clipped: drop the gradients of the parameters this rank does not
   * update (the optimizer makes state only for parameters that have one). */
  kiln_status (*step_begin)(void* state);
  /* Right after the optimizer step: make the ranks' parameters agree again
   * (each owner's updated parameters reach every rank). */
  kiln_status (*step_end)(void* state);
} kiln_strategy_type;

/* ---- the host table ----------------------------------------------------------------------------- */

/* Everything a plugin reaches in the runtime. Members are only ever added at
 * the end; use KILN_HOST_HAS before a member newer than the ABI version the
 * plugin asked for at least. Functions without their own comment behave as
 * the kiln_* function of the same name in kiln.h. */
struct kiln_host {
  size_t size;          /* sizeof the host's kiln_host */
  uint32_t abi_version; /* the version agreed on with this plugin */
  /* The runtime the plugin is being registered in. Registrations belong to
   * this runtime alone, so a type whose callbacks need the runtime later
   * (to create an optimizer's state tensors) may keep it in its `user`. */
  kiln_runtime* runtime;

  /* Errors and logging. error() records `message` as this thread's error
   * message and returns `status`: return host->error(...) from a callback. */
  kiln_status (*error)(kiln_status status, const char* message);
  const char* (*last_error)(void);
  void (*log)(kiln_runtime* rt, kiln_log_level level, const char* message);

  /* Registration, during register_fn only. Names must be unique within
   * their kind in the runtime: a taken name refuses the whole plugin. */
  kiln_status (*register_op)(kiln_registrar* r, const kiln_op_type* type);
  kiln_status (*register_layer)(kiln_registrar* r, const kiln_layer_type* type);
  kiln_status (*register_optimizer)(kiln_registrar* r, const kiln_optimizer_type* type);
  kiln_status (*register_lr_schedule)(kiln_registrar* r, const kiln_lr_schedule_type* type);
  kiln_status (*register_data_source)(kiln_registrar* r, const kiln_data_source_type* type);
  kiln_status (*register_transform)(kiln_registrar* r, const kiln_transform_type* type);
  kiln_status (*register_strategy)(kiln_registrar* r, const kiln_strategy_type* type);

  /* Tensors. */
  void (*tensor_retain)(kiln_tensor* t);
  void (*tensor_release)(kiln_tensor* t);
  kiln_status (*tensor_empty)(kiln_runtime* rt, const int64_t* shape, int rank, kiln_dtype dtype,
                              kiln_device_type device, int device_index, kiln_tensor** out);
  kiln_status (*tensor_full)(kiln_runtime* rt, const int64_t* shape, int rank, double value, kiln_dtype dtype,
                             kiln_device_type device, int device_index, kiln_tensor** out);
  kiln_status (*tensor_from_data)(kiln_runtime* rt, const void* data, size_t nbytes, const int64_t* shape, int rank,
                                  kiln_dtype dtype, kiln_tensor** out);
  kiln_status (*tensor_read)(const kiln_tensor* t, void* dst, size_t dst_bytes);
  /* The address of the first element of a contiguous tensor on any device
   * (a device pointer on CUDA): for kernels. */
  kiln_status (*tensor_address)(const kiln_tensor* t, void** out);
  kiln_status (*tensor_contiguous)(const kiln_tensor* t, kiln_tensor** out);
  kiln_status (*tensor_assign)(kiln_tensor* dst, const kiln_tensor* src);
  kiln_status (*tensor_describe)(const kiln_tensor* t, kiln_tensor_desc* out);
  kiln_status (*tensor_device)(const kiln_tensor* t, kiln_device_type* type, int* index);
  kiln_status (*tensor_set_requires_grad)(kiln_tensor* t, int requires_grad);
  kiln_status (*tensor_grad)(const kiln_tensor* t, kiln_tensor** out);
  kiln_status (*tensor_detach)(const kiln_tensor* t, kiln_tensor** out);
  kiln_status (*tensor_to)(const kiln_tensor* t, kiln_device_type device, int device_index, kiln_tensor** out);

  /* Ops: every op of the runtime, the built-in ones and those of plugins. */
  kiln_status (*op_find)(kiln_runtime* rt, const char* name, const kiln_op** out);
  kiln_status (*op_call)(kiln_runtime* rt, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                         const kiln_attr* attrs, size_t n_attrs, kiln_tensor** outputs, size_t max_outputs,
                         size_t* n_outputs);
  kiln_status (*op_call1)(kiln_runtime* rt, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                          const kiln_attr* attrs, size_t n_attrs, kiln_tensor** out);
  kiln_status (*no_grad_begin)(kiln_runtime* rt);
  kiln_status (*no_grad_end)(kiln_runtime* rt);

  /* Randomness. random_reserve takes `blocks` fresh Philox4x32-10 counters
   * from the runtime's seeded stream (each gives four 32-bit words); philox
   * computes the block (key = seed, counter) into out[4]. Initialisers use
   * the "rand"/"randn" ops; transforms use philox with their seed. */
  kiln_status (*random_reserve)(kiln_runtime* rt, uint64_t blocks, uint64_t* seed, uint64_t* counter);
  void (*philox)(uint64_t seed, uint64_t counter, uint32_t out[4]);

  /* Kernels: the CPU thread pool (fn runs on [begin, end) chunks of
   * [0, n), at least `grain` long, and parallel_for returns when all have
   * run; the first failing chunk's status is returned), and scratch memory
   * on the kernel's device, valid until the kernel returns. */
  kiln_status (*parallel_for)(const kiln_kernel_context* ctx, int64_t n, int64_t grain,
                              kiln_status (*fn)(void* user, int64_t begin, int64_t end), void* user);
  kiln_status (*workspace)(const kiln_kernel_context* ctx, size_t bytes, void** out);

  /* Layers: during create, add parameters (they are set to require grad),
   * buffers (running statistics, ...) and sub-layers (named, their
   * parameters appear as "<name>.<param>"); the module takes its own
   * references. layer_init_runtime gives the runtime to create tensors in. */
  kiln_runtime* (*layer_init_runtime)(kiln_layer_init* init);
  kiln_status (*layer_add_parameter)(kiln_layer_init* init, const char* name, kiln_tensor* t);
  kiln_status (*layer_add_buffer)(kiln_layer_init* init, const char* name, kiln_tensor* t);
  kiln_status (*layer_add_child)(kiln_layer_init* init, const char* name, kiln_module* child);

  /* Modules, for layers made of other layers (a transformer block). */
  kiln_status (*module_create)(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                               kiln_module** out);
  kiln_status (*module_forward)(kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs, kiln_tensor** outputs,
                                size_t max_outputs, size_t* n_outputs);
  kiln_status (*module_set_training)(kiln_module* m, int training);
  void (*module_release)(kiln_module* m);

  /* Optimizers: during init_state, add a state tensor (the host keeps its
   * own reference and gives it back in kiln_optimizer_update.state). */
  kiln_status (*optimizer_add_state)(kiln_optimizer_state_init* init, const char* name, kiln_tensor* t);

  /* Examples. example_get gives a new reference (KILN_ERR_NOT_FOUND when the
   * field is missing); example_set takes its own. */
  kiln_status (*example_set)(kiln_example* ex, const char* name, kiln_tensor* t);
  kiln_status (*example_get)(const kiln_example* ex, const char* name, kiln_tensor** out);

  /* ---- ABI 1.1: check with KILN_HOST_HAS before use ---- */

  /* A module's parameters and buffers, by index (names as its state_dict). */
  kiln_status (*module_parameter_count)(const kiln_module* m, size_t* out);
  kiln_status (*module_parameter)(const kiln_module* m, size_t index, const char** name, kiln_tensor** out);
  kiln_status (*module_buffer_count)(const kiln_module* m, size_t* out);
  kiln_status (*module_buffer)(const kiln_module* m, size_t index, const char** name, kiln_tensor** out);

  /* Gradients: replace one, and hooks that run when one is ready. */
  kiln_status (*tensor_set_grad)(kiln_tensor* t, const kiln_tensor* grad);
  kiln_status (*tensor_add_grad_hook)(kiln_tensor* t, kiln_grad_hook_fn fn, void* user, uint64_t* id);
  kiln_status (*tensor_remove_grad_hook)(kiln_tensor* t, uint64_t id);

  /* Process groups (kiln_dist.h): the runtime's default group, made from the
   * environment on first use, and its collectives. */
  kiln_status (*process_group_default)(kiln_runtime* rt, kiln_process_group** out);
  void (*process_group_release)(kiln_process_group* pg);
  kiln_status (*process_group_rank)(const kiln_process_group* pg, int* rank, int* world_size);
  kiln_status (*process_group_all_reduce)(kiln_process_group* pg, kiln_tensor* t, kiln_reduce_op op,
                                          kiln_work** work);
  kiln_status (*process_group_broadcast)(kiln_process_group* pg, kiln_tensor* t, int root, kiln_work** work);
  kiln_status (*process_group_all_gather)(kiln_process_group* pg, const kiln_tensor* input, kiln_tensor* output,
                                          kiln_work** work);
  kiln_status (*process_group_reduce_scatter)(kiln_process_group* pg, const kiln_tensor* input,
                                              kiln_tensor* output, kiln_reduce_op op, kiln_work** work);
  kiln_status (*work_wait)(kiln_work* work);
  void (*work_release)(kiln_work* work);
};

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_PLUGIN_H */
