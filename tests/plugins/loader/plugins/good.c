/* A well-formed plugin: an op "test_cube" (scale * x^3) with a CPU kernel
 * and a backward made of its own op "test_cube_grad", and a strategy
 * "test_fixed" configured by a world size. */
#include <stdint.h>
#include <stdlib.h>

#include "kiln/kiln_plugin.h"

static const kiln_host* host;

static kiln_status same_as_input0(void* user, const kiln_infer_call* call) {
  (void)user;
  call->outputs[0] = call->inputs[0];
  return KILN_OK;
}

typedef struct {
  kiln_dtype dtype;
  const void* x;
  const void* g; /* NULL for the forward */
  void* out;
  double scale;
  double* squares; /* workspace: x^2 */
} cube_job;

static double load(kiln_dtype dtype, const void* p, int64_t i) {
  return dtype == KILN_F64 ? ((const double*)p)[i] : ((const float*)p)[i];
}

static void store(kiln_dtype dtype, void* p, int64_t i, double v) {
  if (dtype == KILN_F64) ((double*)p)[i] = v;
  else ((float*)p)[i] = (float)v;
}

static kiln_status square_chunk(void* user, int64_t begin, int64_t end) {
  cube_job* job = user;
  int64_t i;
  for (i = begin; i < end; ++i) job->squares[i] = load(job->dtype, job->x, i) * load(job->dtype, job->x, i);
  return KILN_OK;
}

/* forward: scale * x^2 * x; gradient: 3 * scale * x^2 * g. */
static kiln_status finish_chunk(void* user, int64_t begin, int64_t end) {
  cube_job* job = user;
  int64_t i;
  for (i = begin; i < end; ++i) {
    const double other = job->g ? 3.0 * load(job->dtype, job->g, i) : load(job->dtype, job->x, i);
    store(job->dtype, job->out, i, job->scale * job->squares[i] * other);
  }
  return KILN_OK;
}

static kiln_status cube_kernel(void* user, const kiln_kernel_call* call) {
  cube_job job;
  kiln_tensor_desc desc;
  int64_t n = 1;
  int d;
  kiln_status st;
  (void)user;
  st = host->tensor_describe(call->inputs[0], &desc);
  if (st != KILN_OK) return st;
  for (d = 0; d < desc.rank; ++d) n *= desc.dims[d];
  job.dtype = desc.dtype;
  job.scale = call->attrs[0].value.f;
  job.g = NULL;
  if ((st = host->tensor_address(call->inputs[0], (void**)&job.x)) != KILN_OK) return st;
  if (call->n_inputs > 1 && (st = host->tensor_address(call->inputs[1], (void**)&job.g)) != KILN_OK) return st;
  if ((st = host->tensor_address(call->outputs[0], &job.out)) != KILN_OK) return st;
  if ((st = host->workspace(call->context, (size_t)n * sizeof(double), (void**)&job.squares)) != KILN_OK) return st;
  if ((st = host->parallel_for(call->context, n, 2, square_chunk, &job)) != KILN_OK) return st;
  return host->parallel_for(call->context, n, 2, finish_chunk, &job);
}

static kiln_status cube_backward(void* user, const kiln_backward_call* call) {
  const kiln_op* grad_op = NULL;
  kiln_tensor* args[2];
  kiln_status st;
  (void)user;
  if (!call->needs_input_grad[0]) return KILN_OK;
  st = host->op_find(call->runtime, "test_cube_grad", &grad_op);
  if (st != KILN_OK) return st;
  args[0] = call->inputs[0];
  args[1] = call->grad_outputs[0];
  return host->op_call1(call->runtime, grad_op, args, 2, call->attrs, call->n_attrs, &call->grad_inputs[0]);
}

typedef struct {
  int world_size;
} fixed_state;

static kiln_status fixed_create(void* user, kiln_runtime* rt, const kiln_attr* config, size_t n_config, void** state) {
  fixed_state* s;
  (void)user;
  (void)rt;
  (void)n_config;
  if (config[0].value.i < 1) return host->error(KILN_ERR_INVALID_ARGUMENT, "world_size must be at least 1");
  s = malloc(sizeof *s);
  if (!s) return host->error(KILN_ERR_OUT_OF_MEMORY, "no memory for the strategy");
  s->world_size = (int)config[0].value.i;
  *state = s;
  return KILN_OK;
}

static kiln_status fixed_rank(void* state, int* rank, int* world_size) {
  *rank = 0;
  *world_size = ((fixed_state*)state)->world_size;
  return KILN_OK;
}

static kiln_status fixed_reduce(void* state, kiln_tensor* const* params, size_t n_params) {
  (void)state;
  (void)params;
  (void)n_params;
  return host->error(KILN_ERR_UNSUPPORTED, "test_fixed cannot reduce anything");
}

static kiln_status register_good(const kiln_host* h, kiln_registrar* r) {
  static const char* const cube_inputs[] = {"x"};
  static const char* const grad_inputs[] = {"x", "grad"};
  static const kiln_dtype dtypes[] = {KILN_F32, KILN_F64};
  static const kiln_attr_spec scale[] = {{{"scale", KILN_ATTR_FLOAT, {.f = 1.0}}, 0, "factor of the cube"}};
  static const kiln_attr_spec world[] = {{{"world_size", KILN_ATTR_INT, {.i = 1}}, 0, "processes reported"},
                                         {{"weight", KILN_ATTR_FLOAT, {.f = 0.5}}, 0, "unused"}};
  kiln_op_type cube = {0}, cube_grad;
  kiln_strategy_type fixed = {0};
  kiln_status st;
  host = h;
  cube.size = sizeof cube;
  cube.name = "test_cube";
  cube.input_names = cube_inputs;
  cube.n_inputs = 1;
  cube.n_outputs = 1;
  cube.attrs = scale;
  cube.n_attrs = 1;
  cube.dtypes = dtypes;
  cube.n_dtypes = 2;
  cube.infer = same_as_input0;
  cube.cpu_kernel = cube_kernel;
  cube.backward = cube_backward;
  cube_grad = cube;
  cube_grad.name = "test_cube_grad";
  cube_grad.input_names = grad_inputs;
  cube_grad.n_inputs = 2;
  cube_grad.backward = NULL;
  fixed.size = sizeof fixed;
  fixed.name = "test_fixed";
  fixed.config = world;
  fixed.n_config = 2;
  fixed.create = fixed_create;
  fixed.rank = fixed_rank;
  fixed.reduce_gradients = fixed_reduce;
  fixed.destroy = free;
  if ((st = h->register_op(r, &cube)) != KILN_OK) return st;
  if ((st = h->register_op(r, &cube_grad)) != KILN_OK) return st;
  return h->register_strategy(r, &fixed);
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor d = {sizeof d, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 0), "test-good",
                                           "1.2.3", register_good};
  return &d;
}
