#include "module/layer_module.hpp"

#include <algorithm>
#include <array>

#include "guard.hpp"
#include "handles.hpp"
#include "module/module_error.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"
#include "plugin/host_callbacks.hpp"

namespace kiln::abi {
namespace {

// Room given to a layer's forward for its outputs; no layer type returns more.
constexpr size_t kMaxLayerOutputs = 16;

bool has_name(std::span<const NamedTensor> tensors, const std::string& name) {
  return std::any_of(tensors.begin(), tensors.end(), [&](const NamedTensor& t) { return t.name == name; });
}

}  // namespace

std::unique_ptr<LayerModule> LayerModule::create(kiln_runtime* rt, const char* type, const kiln_attr* config,
                                                 size_t n_config) {
  std::shared_ptr<const LayerEntry> entry = rt->plugins.layer(type);
  KILN_CHECK(config || n_config == 0, Status::invalid_argument, "layer '", entry->name, "': 'config' is NULL with ",
             n_config, " entries");
  Config completed = entry->schema.make(config, n_config);
  std::unique_ptr<LayerModule> layer(new LayerModule(rt, entry, std::move(completed)));
  kiln_layer_init init{rt, layer.get()};
  void* state = nullptr;
  const kiln_status status =
      entry->type.create(entry->type.user, &init, layer->config_.data(), layer->config_.size(), &state);
  // On failure the plugin has freed its state; what it added is dropped with `layer`.
  KILN_CHECK(status == KILN_OK, Status(status), "layer '", entry->name, "': ", kiln_last_error());
  layer->state_ = state;
  return layer;
}

LayerModule::LayerModule(kiln_runtime* rt, std::shared_ptr<const LayerEntry> entry, Config config)
    : Module(rt), entry_(std::move(entry)), config_(std::move(config)) {}

LayerModule::~LayerModule() {
  if (state_) entry_->type.destroy(state_);
}

std::vector<TensorRef> LayerModule::forward(std::span<kiln_tensor* const> inputs) {
  std::array<kiln_tensor*, kMaxLayerOutputs> outputs{};
  size_t n_outputs = 1;
  const kiln_layer_call call{.size = sizeof(kiln_layer_call),
                             .runtime = runtime(),
                             .training = training() ? 1 : 0,
                             .inputs = inputs.data(),
                             .n_inputs = inputs.size(),
                             .outputs = outputs.data(),
                             .max_outputs = outputs.size(),
                             .n_outputs = &n_outputs};
  const kiln_status status = entry_->type.forward(state_, &call);
  throw_if_failed(status);
  KILN_CHECK(n_outputs <= outputs.size(), Status::internal, "layer '", type(), "' reported ", n_outputs,
             " outputs; it has room for ", outputs.size());
  std::vector<TensorRef> result;
  result.reserve(n_outputs);
  // Every reference is taken over first, so none leaks when one is missing.
  for (size_t i = 0; i < n_outputs; ++i) result.push_back(TensorRef::adopt(outputs[i]));
  for (size_t i = 0; i < n_outputs; ++i)
    KILN_CHECK(result[i].get(), Status::internal, "layer '", type(), "' reported ", n_outputs,
               " outputs but left output ", i, " NULL");
  return result;
}

std::string LayerModule::new_name(const char* name, const char* what) const {
  std::string checked(name);
  check_child_name(checked, what);
  const bool taken =
      has_name(parameters_, checked) || has_name(buffers_, checked) ||
      std::any_of(children_.begin(), children_.end(), [&](const ModuleChild& c) { return c.name == checked; });
  KILN_CHECK(!taken, Status::invalid_argument, "layer '", type(), "': the name '", checked,
             "' is already taken by a parameter, buffer or sub-layer of this layer");
  return checked;
}

void LayerModule::add_parameter(const char* name, kiln_tensor* t) {
  std::string checked = new_name(name, "parameter");
  check_owner(runtime(), t, "t");
  KILN_CHECK(is_floating(t->tensor.dtype()), Status::dtype_mismatch, "layer '", type(), "': parameter '", checked,
             "' is ", dtype_name(t->tensor.dtype()),
             "; parameters are floating (f32, f64, f16, bf16), other data belongs in a buffer");
  t->tensor.set_requires_grad(true);
  parameters_.push_back({std::move(checked), TensorRef::retain(t)});
}

void LayerModule::add_buffer(const char* name, kiln_tensor* t) {
  std::string checked = new_name(name, "buffer");
  check_owner(runtime(), t, "t");
  buffers_.push_back({std::move(checked), TensorRef::retain(t)});
}

void LayerModule::add_child(const char* name, kiln_module* child) {
  std::string checked = new_name(name, "sub-layer");
  KILN_CHECK(child->runtime == runtime(), Status::invalid_argument, "layer '", type(), "': sub-layer '", checked,
             "' belongs to another runtime");
  children_.push_back({std::move(checked), ModuleRef::retain(child)});
}

}  // namespace kiln::abi

namespace kiln::abi::host {

kiln_runtime* layer_init_runtime(kiln_layer_init* init) { return init ? init->runtime : nullptr; }

kiln_status layer_add_parameter(kiln_layer_init* init, const char* name, kiln_tensor* t) {
  KILN_REQUIRE(init, name, t);
  return guarded(__func__, [&] { init->module->add_parameter(name, t); });
}

kiln_status layer_add_buffer(kiln_layer_init* init, const char* name, kiln_tensor* t) {
  KILN_REQUIRE(init, name, t);
  return guarded(__func__, [&] { init->module->add_buffer(name, t); });
}

kiln_status layer_add_child(kiln_layer_init* init, const char* name, kiln_module* child) {
  KILN_REQUIRE(init, name, child);
  return guarded(__func__, [&] { init->module->add_child(name, child); });
}

}  // namespace kiln::abi::host
