// kiln_module_build: shape inference by running the model once on zeros,
// in eval mode and without recording gradients. A layer that does not fit
// fails with its path, index, type, input shapes and the reason (see
// ModuleError), and the modes the caller had set are restored either way.
#include <string>
#include <vector>

#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "module/module_error.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"

using kiln::abi::TensorRef;

namespace {

// Where the model's tensors are (the first parameter's or buffer's device),
// so that the zeros meet them there; the CPU for a model without any.
kiln::Device model_device(const kiln_module& m) {
  for (const auto& listing : {kiln::abi::tree_parameters(m), kiln::abi::tree_buffers(m)})
    if (!listing.empty()) return listing.front().tensor->tensor.device();
  return kiln::Device::cpu();
}

kiln_tensor_desc describe_output(const kiln::Tensor& t) {
  kiln_tensor_desc desc{};
  desc.rank = t.rank();
  for (int d = 0; d < t.rank(); ++d) desc.dims[d] = t.shape()[d];
  desc.dtype = kiln::abi::from_dtype(t.dtype());
  return desc;
}

}  // namespace

extern "C" {

kiln_status kiln_module_build(kiln_module* m, const kiln_tensor_desc* inputs, size_t n_inputs,
                              kiln_tensor_desc* outputs, size_t max_outputs, size_t* n_outputs) {
  KILN_REQUIRE(m, n_outputs);
  return kiln::abi::guarded(__func__, [&] {
    KILN_CHECK(inputs || n_inputs == 0, kiln::Status::invalid_argument, "'inputs' is NULL with ", n_inputs, " entries");
    KILN_CHECK(outputs || max_outputs == 0, kiln::Status::invalid_argument, "'outputs' is NULL with room for ",
               max_outputs);
    kiln::Runtime& rt = m->runtime->runtime;
    const kiln::Device device = model_device(*m);
    std::vector<TensorRef> zeros;
    for (size_t i = 0; i < n_inputs; ++i) {
      const std::string what = kiln::str_cat("inputs[", i, "]");
      const kiln::Shape shape = kiln::abi::to_shape(inputs[i].dims, inputs[i].rank, what.c_str());
      const kiln::DType dtype = kiln::abi::to_dtype(inputs[i].dtype);
      zeros.push_back(TensorRef::adopt(kiln::abi::new_handle(m->runtime, rt.full(shape, 0.0, dtype, device))));
    }
    std::vector<TensorRef> results;
    {
      const kiln::abi::TrainingSnapshot modes(*m);
      kiln::abi::set_training(*m, false);
      const kiln::NoGradGuard no_grad(rt);
      results = kiln::abi::forward_module(*m->module, kiln::abi::borrow(zeros));
    }
    KILN_CHECK(results.size() <= max_outputs, kiln::Status::invalid_argument, "the ", m->module->type(), " returns ",
               results.size(), " outputs, 'outputs' has room for ", max_outputs);
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = describe_output(results[i]->tensor);
    *n_outputs = results.size();
  });
}

}  // extern "C"
