// The host table: mostly the C API's own functions (they already follow the
// table's rules), plus the few that exist for plugins only.
#include "plugin/host_table.hpp"

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/util/philox.hpp"
#include "plugin/host_callbacks.hpp"
#include "plugin/kernel_scope.hpp"
#include "plugin/registrar.hpp"

namespace kiln::abi {
namespace {

// A plugin's message goes in as it is: the code that called the plugin
// adds the plugin's and the object's names.
kiln_status error(kiln_status status, const char* message) {
  return set_error(status, "", message ? message : "(the plugin gave no message)");
}

void log(kiln_runtime* rt, kiln_log_level level, const char* message) {
  if (rt && message) rt->log.write(level, message);
}

kiln_status tensor_address(const kiln_tensor* t, void** out) {
  KILN_REQUIRE(t, out);
  return guarded(__func__, [&] {
    KILN_CHECK(t->tensor.is_contiguous(), Status::invalid_state, "the ", describe(t->tensor),
               " tensor is a strided view; make a dense copy with tensor_contiguous first");
    *out = t->tensor.raw_data();
  });
}

kiln_status tensor_describe(const kiln_tensor* t, kiln_tensor_desc* out) {
  KILN_REQUIRE(t, out);
  *out = kiln_tensor_desc{};
  out->rank = t->tensor.rank();
  for (int i = 0; i < out->rank; ++i) out->dims[i] = t->tensor.dim(i);
  kiln_tensor_dtype(t, &out->dtype);
  return KILN_OK;
}

kiln_status random_reserve(kiln_runtime* rt, uint64_t blocks, uint64_t* seed, uint64_t* counter) {
  KILN_REQUIRE(rt, seed, counter);
  return guarded(__func__, [&] {
    const GeneratorState range = rt->runtime.reserve_random(blocks);
    *seed = range.seed;
    *counter = range.offset;
  });
}

// The block the runtime's own random ops draw from counter `counter`.
void philox(uint64_t seed, uint64_t counter, uint32_t out[4]) {
  const std::array<uint32_t, 4> block = Philox::block(seed, 0, counter);
  std::copy(block.begin(), block.end(), out);
}

}  // namespace

kiln_host make_host_table(kiln_runtime* rt, uint32_t abi_version) {
  kiln_host h{};
  h.size = sizeof(kiln_host);
  h.abi_version = abi_version;
  h.runtime = rt;

  h.error = error;
  h.last_error = kiln_last_error;
  h.log = log;

  h.register_op = host::register_op;
  h.register_layer = host::register_layer;
  h.register_optimizer = host::register_optimizer;
  h.register_lr_schedule = host::register_lr_schedule;
  h.register_data_source = host::register_data_source;
  h.register_transform = host::register_transform;
  h.register_strategy = host::register_strategy;

  h.tensor_retain = kiln_tensor_retain;
  h.tensor_release = kiln_tensor_release;
  h.tensor_empty = kiln_tensor_empty;
  h.tensor_full = kiln_tensor_full;
  h.tensor_from_data = kiln_tensor_from_data;
  h.tensor_read = kiln_tensor_read;
  h.tensor_address = tensor_address;
  h.tensor_contiguous = kiln_tensor_contiguous;
  h.tensor_assign = kiln_tensor_assign;
  h.tensor_describe = tensor_describe;
  h.tensor_device = kiln_tensor_device;
  h.tensor_set_requires_grad = kiln_tensor_set_requires_grad;
  h.tensor_grad = kiln_tensor_grad;
  h.tensor_detach = kiln_tensor_detach;
  h.tensor_to = kiln_tensor_to;

  h.op_find = kiln_op_find;
  h.op_call = kiln_op_call;
  h.op_call1 = kiln_op_call1;
  h.no_grad_begin = kiln_no_grad_begin;
  h.no_grad_end = kiln_no_grad_end;

  h.random_reserve = random_reserve;
  h.philox = philox;

  h.parallel_for = host::parallel_for;
  h.workspace = host::workspace;

  h.layer_init_runtime = host::layer_init_runtime;
  h.layer_add_parameter = host::layer_add_parameter;
  h.layer_add_buffer = host::layer_add_buffer;
  h.layer_add_child = host::layer_add_child;

  h.module_create = kiln_module_create;
  h.module_forward = kiln_module_forward;
  h.module_set_training = kiln_module_set_training;
  h.module_release = kiln_module_release;

  h.optimizer_add_state = host::optimizer_add_state;

  h.example_set = kiln_example_set;
  h.example_get = kiln_example_get;

  h.module_parameter_count = kiln_module_parameter_count;
  h.module_parameter = kiln_module_parameter;
  h.module_buffer_count = kiln_module_buffer_count;
  h.module_buffer = kiln_module_buffer;
  h.tensor_set_grad = kiln_tensor_set_grad;
  h.tensor_add_grad_hook = kiln_tensor_add_grad_hook;
  h.tensor_remove_grad_hook = kiln_tensor_remove_grad_hook;
  h.process_group_default = kiln_process_group_default;
  h.process_group_release = kiln_process_group_release;
  h.process_group_rank = kiln_process_group_rank;
  h.process_group_all_reduce = kiln_process_group_all_reduce;
  h.process_group_broadcast = kiln_process_group_broadcast;
  h.process_group_all_gather = kiln_process_group_all_gather;
  h.process_group_reduce_scatter = kiln_process_group_reduce_scatter;
  h.work_wait = kiln_work_wait;
  h.work_release = kiln_work_release;
  return h;
}

}  // namespace kiln::abi
