// kiln::Module: a reference on a kiln_module (copies share the module):
// plugin layers, op modules, Sequential and Graph containers, forward,
// shape inference, parameters and buffers, devices and dtypes, and weights
// files.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "attr.hpp"
#include "c_strings.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "kiln/kiln.h"
#include "op.hpp"
#include "runtime.hpp"
#include "tensor.hpp"

namespace kiln {

// A tensor's shape and element type, without data (kiln_tensor_desc).
struct TensorDesc {
  Shape shape;
  kiln_dtype dtype = KILN_F32;
};

class Module : public detail::SharedHandle<kiln_module, kiln_module_retain, kiln_module_release> {
 public:
  // A layer of a registered type ("Linear", "Conv2d", ...).
  Module(const Runtime& rt, const std::string& type, const AttrList& config = {}) {
    kiln_module* m = nullptr;
    check(kiln_module_create(rt.get(), type.c_str(), config.data(), config.size(), &m));
    *this = adopt(m);
  }
  explicit Module(std::nullptr_t) noexcept {}
  // Takes over the caller's reference on `m`; retain() adds one.
  static Module adopt(kiln_module* m) noexcept { return Module(m); }
  static Module retain(kiln_module* m) noexcept {
    kiln_module_retain(m);
    return Module(m);
  }

  // A module without parameters calling one op.
  static Module from_op(const Op& op, const AttrList& attrs = {}) {
    kiln_module* m = nullptr;
    check(kiln_module_from_op(op.runtime().get(), op.get(), attrs.data(), attrs.size(), &m));
    return adopt(m);
  }

  // A Sequential of `children`, named "0", "1", ...
  static Module sequential(const Runtime& rt, const std::vector<Module>& children = {}) {
    kiln_module* m = nullptr;
    check(kiln_sequential_create(rt.get(), &m));
    Module sequential = adopt(m);
    for (const Module& child : children) sequential.append(child);
    return sequential;
  }
  // Appends to a Sequential, named by its index or by `name`.
  void append(const Module& child) { check(kiln_sequential_append(get(), nullptr, child.get())); }
  void append(const std::string& name, const Module& child) {
    check(kiln_sequential_append(get(), name.c_str(), child.get()));
  }

  // A Graph with named inputs; nodes read inputs and earlier nodes
  // ("name", or "name:k" for output k).
  static Module graph(const Runtime& rt, const std::vector<std::string>& input_names) {
    const std::vector<const char*> names = detail::c_strings(input_names);
    kiln_module* m = nullptr;
    check(kiln_graph_create(rt.get(), names.data(), names.size(), &m));
    return adopt(m);
  }
  void add(const std::string& name, const Module& node, const std::vector<std::string>& inputs) {
    const std::vector<const char*> names = detail::c_strings(inputs);
    check(kiln_graph_add(get(), name.c_str(), node.get(), names.data(), names.size()));
  }
  void set_outputs(const std::vector<std::string>& outputs) {
    const std::vector<const char*> names = detail::c_strings(outputs);
    check(kiln_graph_set_outputs(get(), names.data(), names.size()));
  }

  // The output shapes for inputs shaped like `inputs`.
  std::vector<TensorDesc> build(const std::vector<TensorDesc>& inputs) {
    std::vector<kiln_tensor_desc> in;
    for (const TensorDesc& d : inputs) {
      if (d.shape.size() > KILN_MAX_DIMS)
        detail::fail(KILN_ERR_INVALID_ARGUMENT, "an input of build() has " + std::to_string(d.shape.size()) +
                                                    " dimensions; at most " + std::to_string(KILN_MAX_DIMS));
      kiln_tensor_desc c{};
      c.rank = static_cast<int>(d.shape.size());
      std::copy(d.shape.begin(), d.shape.end(), c.dims);
      c.dtype = d.dtype;
      in.push_back(c);
    }
    kiln_tensor_desc out[kMaxOutputs];
    size_t n = 0;
    check(kiln_module_build(get(), in.data(), in.size(), out, kMaxOutputs, &n));
    std::vector<TensorDesc> outputs;
    for (size_t i = 0; i < n; ++i) outputs.push_back({Shape(out[i].dims, out[i].dims + out[i].rank), out[i].dtype});
    return outputs;
  }

  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) const {
    const std::vector<kiln_tensor*> handles = detail::handles_of(inputs);
    kiln_tensor* outputs[kMaxOutputs];
    size_t n = 0;
    check(kiln_module_forward(get(), handles.data(), handles.size(), outputs, kMaxOutputs, &n));
    return detail::adopt_all(outputs, n);
  }
  // For a module with one output.
  Tensor operator()(const std::vector<Tensor>& inputs) const {
    const std::vector<kiln_tensor*> handles = detail::handles_of(inputs);
    kiln_tensor* out = nullptr;
    check(kiln_module_forward1(get(), handles.data(), handles.size(), &out));
    return Tensor::adopt(out);
  }

  void set_training(bool training) { check(kiln_module_set_training(get(), training)); }
  bool training() const {
    int out = 0;
    check(kiln_module_training(get(), &out));
    return out != 0;
  }
  // "Linear", "Sequential", "Graph", "op:add", ...
  std::string type() const {
    const char* type = nullptr;
    check(kiln_module_type(get(), &type));
    return type;
  }

  // Parameters and buffers of the module and all it contains: the module's
  // own tensors (writing into them changes the module), in a fixed order.
  std::vector<NamedTensor> named_parameters() const {
    return detail::named_tensors(get(), kiln_module_parameter_count, kiln_module_parameter);
  }
  std::vector<Tensor> parameters() const { return tensors_of(named_parameters()); }
  std::vector<NamedTensor> named_buffers() const {
    return detail::named_tensors(get(), kiln_module_buffer_count, kiln_module_buffer);
  }
  std::vector<Tensor> buffers() const { return tensors_of(named_buffers()); }

  void to(Device device) { check(kiln_module_to(get(), device.type, device.index)); }
  void cast(kiln_dtype dtype) { check(kiln_module_cast(get(), dtype)); }

  // Weights files: parameters and buffers under PyTorch's state_dict names.
  void save_weights(const std::string& path) const { check(kiln_weights_save(get(), path.c_str())); }
  // strict: the file must hold exactly the module's names. All or nothing.
  void load_weights(const std::string& path, bool strict = true) {
    check(kiln_weights_load(get(), path.c_str(), strict));
  }

 private:
  explicit Module(kiln_module* m) noexcept : SharedHandle(m) {}

  static std::vector<Tensor> tensors_of(const std::vector<NamedTensor>& named) {
    std::vector<Tensor> tensors;
    for (const NamedTensor& n : named) tensors.push_back(n.tensor);
    return tensors;
  }
};

}  // namespace kiln
