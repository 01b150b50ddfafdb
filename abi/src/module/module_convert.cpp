// kiln_module_to and kiln_module_cast: the tensor inside each parameter and
// buffer handle is replaced, so the handles the layers and the caller hold
// see the moved or cast data. Gradients are dropped; parameters keep their
// requires_grad.
#include <functional>
#include <utility>
#include <vector>

#include "convert.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "module/module_error.hpp"
#include "module/module_handle.hpp"
#include "module/module_tree.hpp"

namespace {

using Conversion = std::function<kiln::Tensor(kiln_tensor* handle)>;

// Every replacement is computed before the first is made, so a failure
// leaves the module as it was.
void replace_tensors(kiln_module& m, const Conversion& convert) {
  const kiln::NoGradGuard no_grad(m.runtime->runtime);
  std::vector<std::pair<kiln_tensor*, kiln::Tensor>> replacements;
  const auto plan = [&](const std::vector<kiln::abi::TreeTensor>& listing, const char* what) {
    for (const kiln::abi::TreeTensor& entry : listing) {
      try {
        kiln::Tensor fresh = convert(entry.tensor).detach();
        if (entry.tensor->tensor.requires_grad()) fresh.set_requires_grad(true);
        replacements.emplace_back(entry.tensor, std::move(fresh));
      } catch (const kiln::Error& e) {
        kiln::throw_error(
            e.status(), kiln::str_cat(what, " '", entry.name, "' (", describe(entry.tensor->tensor), "): ", e.what()));
      }
    }
  };
  plan(kiln::abi::tree_parameters(m), "parameter");
  plan(kiln::abi::tree_buffers(m), "buffer");
  for (auto& [handle, fresh] : replacements) handle->tensor = std::move(fresh);
}

}  // namespace

extern "C" {

kiln_status kiln_module_to(kiln_module* m, kiln_device_type device, int device_index) {
  KILN_REQUIRE(m);
  return kiln::abi::guarded(__func__, [&] {
    m->runtime->runtime.check_device(kiln::abi::to_device(device, device_index));
    replace_tensors(*m, [&](kiln_tensor* handle) {
      kiln_tensor* moved = nullptr;
      kiln::abi::throw_if_failed(kiln_tensor_to(handle, device, device_index, &moved));
      kiln::Tensor result = moved->tensor;
      kiln_tensor_release(moved);
      return result;
    });
  });
}

kiln_status kiln_module_cast(kiln_module* m, kiln_dtype dtype) {
  KILN_REQUIRE(m);
  return kiln::abi::guarded(__func__, [&] {
    const kiln::DType target = kiln::abi::to_dtype(dtype);
    KILN_CHECK(kiln::is_floating(target), kiln::Status::invalid_argument, "cannot cast a module to ",
               kiln::dtype_name(target),
               "; modules cast their floating tensors to a floating dtype (f32, f64, f16, bf16)");
    kiln::Runtime& rt = m->runtime->runtime;
    const kiln::OpDef& cast = rt.op("cast");
    const kiln::Attrs attrs = cast.make_attrs({{"dtype", target}});
    replace_tensors(*m, [&](kiln_tensor* handle) {
      const kiln::Tensor& t = handle->tensor;
      return kiln::is_floating(t.dtype()) && t.dtype() != target ? rt.call1(cast, {t}, attrs) : t;
    });
  });
}

}  // extern "C"
