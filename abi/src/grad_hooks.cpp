// Gradients through the C API beyond reading them: replacing one, and the
// gradient-ready hooks data-parallel training hangs its reduction on.
#include <string>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/error.hpp"

using kiln::Status;
using kiln::abi::check_owner;
using kiln::abi::guarded;

extern "C" {

kiln_status kiln_tensor_set_grad(kiln_tensor* t, const kiln_tensor* grad) {
  KILN_REQUIRE(t);
  return guarded(__func__, [&] {
    kiln::Tensor& leaf = t->tensor;
    KILN_CHECK(leaf.is_leaf() && leaf.requires_grad(), Status::invalid_state,
               "only a leaf that requires grad has a gradient to set; this ", describe(leaf), " tensor ",
               leaf.is_leaf() ? "does not require grad" : "was computed by an op");
    if (!grad) {
      leaf.set_grad(kiln::Tensor());
      return;
    }
    check_owner(t->runtime, grad, "grad");
    const kiln::Tensor& g = grad->tensor;
    const Status mismatch = g.shape() != leaf.shape()   ? Status::shape_mismatch
                            : g.dtype() != leaf.dtype() ? Status::dtype_mismatch
                                                        : Status::device_mismatch;
    KILN_CHECK(g.shape() == leaf.shape() && g.dtype() == leaf.dtype() && g.device() == leaf.device(), mismatch,
               "a gradient ", describe(g), " for a tensor ", describe(leaf), " (shape, dtype and device must match)");
    leaf.set_grad(t->runtime->runtime.call1("copy", {g}).detach());
  });
}

kiln_status kiln_tensor_add_grad_hook(kiln_tensor* t, kiln_grad_hook_fn fn, void* user, uint64_t* id) {
  KILN_REQUIRE(t, id);
  if (!fn) return kiln::abi::null_argument(__func__, "t, fn", 1);
  return guarded(__func__, [&] {
    kiln_runtime* rt = t->runtime;
    *id = t->tensor.add_grad_hook([rt, fn, user](const kiln::Tensor& leaf) {
      kiln_tensor* handle = kiln::abi::new_handle(rt, leaf);
      kiln_status status = fn(user, handle);
      kiln_tensor_release(handle);
      if (status != KILN_OK) {
        kiln::throw_error(Status(status), std::string("a gradient hook failed: ") + kiln_last_error());
      }
    });
  });
}

kiln_status kiln_tensor_remove_grad_hook(kiln_tensor* t, uint64_t id) {
  KILN_REQUIRE(t);
  return guarded(__func__, [&] { t->tensor.remove_grad_hook(id); });
}

}  // extern "C"
