// The C API of modules: creation of layers and op modules, references,
// forward, train/eval, and the dotted listing of parameters and buffers.
#include <memory>
#include <vector>

#include "guard.hpp"
#include "handles.hpp"
#include "module/layer_module.hpp"
#include "module/module_error.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"
#include "module/op_module.hpp"

using kiln::abi::guarded;
using kiln::abi::TensorRef;
using kiln::abi::TreeTensor;

namespace {

std::vector<TensorRef> run(kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs) {
  KILN_CHECK(inputs || n_inputs == 0, kiln::Status::invalid_argument, "'inputs' is NULL with ", n_inputs, " entries");
  for (size_t i = 0; i < n_inputs; ++i) {
    KILN_CHECK(inputs[i], kiln::Status::invalid_argument, "inputs[", i, "] is NULL");
    KILN_CHECK(inputs[i]->runtime == m->runtime, kiln::Status::invalid_argument, "inputs[", i,
               "] belongs to another runtime than the module");
  }
  return kiln::abi::forward_module(*m->module, {inputs, n_inputs});
}

// Entry `index` of a listing, given out as kiln_module_parameter and
// kiln_module_buffer do; `what` is "parameter" or "buffer".
void give_entry(const kiln_module* m, const std::vector<TreeTensor>& entries, size_t index, const char* what,
                const char** name, kiln_tensor** out) {
  KILN_CHECK(index < entries.size(), kiln::Status::invalid_argument, what, " index ", index,
             " is out of range: the module has ", entries.size(), " ", what, "s");
  const TreeTensor& entry = entries[index];
  *name = m->keep_name(entry.name);
  kiln_tensor_retain(entry.tensor);
  *out = entry.tensor;
}

}  // namespace

extern "C" {

kiln_status kiln_module_create(kiln_runtime* rt, const char* type, const kiln_attr* config, size_t n_config,
                               kiln_module** out) {
  KILN_REQUIRE(rt, type, out);
  return guarded(__func__, [&] {
    std::unique_ptr<kiln::abi::LayerModule> layer = kiln::abi::LayerModule::create(rt, type, config, n_config);
    *out = kiln::abi::new_module_handle(rt, std::move(layer));
  });
}

kiln_status kiln_module_from_op(kiln_runtime* rt, const kiln_op* op, const kiln_attr* attrs, size_t n_attrs,
                                kiln_module** out) {
  KILN_REQUIRE(rt, op, out);
  return guarded(__func__, [&] {
    *out = kiln::abi::new_module_handle(rt, std::make_unique<kiln::abi::OpModule>(rt, op, attrs, n_attrs));
  });
}

void kiln_module_retain(kiln_module* m) {
  if (m) m->refs.fetch_add(1, std::memory_order_relaxed);
}

void kiln_module_release(kiln_module* m) {
  if (m && m->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete m;
}

kiln_status kiln_module_forward(kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs, kiln_tensor** outputs,
                                size_t max_outputs, size_t* n_outputs) {
  KILN_REQUIRE(m, n_outputs);
  return guarded(__func__, [&] {
    KILN_CHECK(outputs || max_outputs == 0, kiln::Status::invalid_argument, "'outputs' is NULL with room for ",
               max_outputs);
    std::vector<TensorRef> results = run(m, inputs, n_inputs);
    KILN_CHECK(results.size() <= max_outputs, kiln::Status::invalid_argument, "the ", m->module->type(), " returns ",
               results.size(), " outputs, 'outputs' has room for ", max_outputs);
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = results[i].release();
    *n_outputs = results.size();
  });
}

kiln_status kiln_module_forward1(kiln_module* m, kiln_tensor* const* inputs, size_t n_inputs, kiln_tensor** out) {
  KILN_REQUIRE(m, out);
  return guarded(__func__, [&] {
    std::vector<TensorRef> results = run(m, inputs, n_inputs);
    KILN_CHECK(results.size() == 1, kiln::Status::invalid_argument, "the ", m->module->type(), " returns ",
               results.size(), " outputs; use kiln_module_forward for it");
    *out = results[0].release();
  });
}

kiln_status kiln_module_set_training(kiln_module* m, int training) {
  KILN_REQUIRE(m);
  return guarded(__func__, [&] { kiln::abi::set_training(*m, training != 0); });
}

kiln_status kiln_module_training(const kiln_module* m, int* out) {
  KILN_REQUIRE(m, out);
  *out = m->module->training() ? 1 : 0;
  return KILN_OK;
}

kiln_status kiln_module_type(const kiln_module* m, const char** out) {
  KILN_REQUIRE(m, out);
  *out = m->module->type().c_str();
  return KILN_OK;
}

kiln_status kiln_module_parameter_count(const kiln_module* m, size_t* out) {
  KILN_REQUIRE(m, out);
  return guarded(__func__, [&] { *out = kiln::abi::tree_parameters(*m).size(); });
}

kiln_status kiln_module_parameter(const kiln_module* m, size_t index, const char** name, kiln_tensor** out) {
  KILN_REQUIRE(m, name, out);
  return guarded(__func__, [&] { give_entry(m, kiln::abi::tree_parameters(*m), index, "parameter", name, out); });
}

kiln_status kiln_module_buffer_count(const kiln_module* m, size_t* out) {
  KILN_REQUIRE(m, out);
  return guarded(__func__, [&] { *out = kiln::abi::tree_buffers(*m).size(); });
}

kiln_status kiln_module_buffer(const kiln_module* m, size_t index, const char** name, kiln_tensor** out) {
  KILN_REQUIRE(m, name, out);
  return guarded(__func__, [&] { give_entry(m, kiln::abi::tree_buffers(*m), index, "buffer", name, out); });
}

}  // extern "C"
