// Autograd through the C API: parameters, gradients, backward and no-grad
// scopes.
#include <algorithm>
#include <utility>
#include <vector>

#include "guard.hpp"
#include "handles.hpp"
#include "kiln/autograd/grad_mode.hpp"
#include "kiln/error.hpp"

using kiln::abi::check_owner;
using kiln::abi::guarded;
using kiln::abi::new_handle;

namespace {

// Open no-grad scopes of this thread, innermost last: the runtime's id and
// the grad mode to restore when the scope ends.
thread_local std::vector<std::pair<uint64_t, bool>> tls_no_grad_scopes;

}  // namespace

extern "C" {

kiln_status kiln_tensor_set_requires_grad(kiln_tensor* t, int requires_grad) {
  KILN_REQUIRE(t);
  return guarded(__func__, [&] { t->tensor.set_requires_grad(requires_grad != 0); });
}

kiln_status kiln_tensor_requires_grad(const kiln_tensor* t, int* out) {
  KILN_REQUIRE(t, out);
  *out = t->tensor.requires_grad() ? 1 : 0;
  return KILN_OK;
}

kiln_status kiln_tensor_grad(const kiln_tensor* t, kiln_tensor** out) {
  KILN_REQUIRE(t, out);
  return guarded(__func__, [&] {
    kiln::Tensor g = t->tensor.grad();
    *out = g.defined() ? new_handle(t->runtime, std::move(g)) : nullptr;
  });
}

kiln_status kiln_tensor_zero_grad(kiln_tensor* t) {
  KILN_REQUIRE(t);
  t->tensor.set_grad(kiln::Tensor());
  return KILN_OK;
}

kiln_status kiln_tensor_detach(const kiln_tensor* t, kiln_tensor** out) {
  KILN_REQUIRE(t, out);
  return guarded(__func__, [&] { *out = new_handle(t->runtime, t->tensor.detach()); });
}

kiln_status kiln_backward(kiln_runtime* rt, const kiln_tensor* t, const kiln_tensor* grad, int retain_graph) {
  KILN_REQUIRE(rt, t);
  return guarded(__func__, [&] {
    check_owner(rt, t, "t");
    if (grad) check_owner(rt, grad, "grad");
    rt->runtime.backward(t->tensor, grad ? grad->tensor : kiln::Tensor(), retain_graph != 0);
  });
}

kiln_status kiln_no_grad_begin(kiln_runtime* rt) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] {
    const uint64_t id = rt->runtime.id();
    tls_no_grad_scopes.emplace_back(id, kiln::grad_enabled(id));
    kiln::set_grad_enabled(id, false);
  });
}

kiln_status kiln_no_grad_end(kiln_runtime* rt) {
  KILN_REQUIRE(rt);
  return guarded(__func__, [&] {
    const uint64_t id = rt->runtime.id();
    auto scope = std::find_if(tls_no_grad_scopes.rbegin(), tls_no_grad_scopes.rend(),
                              [id](const auto& s) { return s.first == id; });
    KILN_CHECK(scope != tls_no_grad_scopes.rend(), kiln::Status::invalid_state,
               "no open no-grad scope of this runtime on this thread (kiln_no_grad_begin was not called, or "
               "was called on another thread)");
    kiln::set_grad_enabled(id, scope->second);
    tls_no_grad_scopes.erase(std::next(scope).base());
  });
}

kiln_status kiln_grad_enabled(kiln_runtime* rt, int* out) {
  KILN_REQUIRE(rt, out);
  *out = kiln::grad_enabled(rt->runtime.id()) ? 1 : 0;
  return KILN_OK;
}

}  // extern "C"
