// kiln::Op: an op of a runtime, looked up once by name and called by
// handle; and the autograd switches that live in the runtime (backward,
// no-grad scopes).
#pragma once

#include <string>
#include <vector>

#include "attr.hpp"
#include "error.hpp"
#include "kiln/kiln.h"
#include "runtime.hpp"
#include "tensor.hpp"

namespace kiln {

// The most outputs an op or a module may give the wrapper; the C call
// fails, naming the count, for one that gives more.
inline constexpr size_t kMaxOutputs = 64;

class Op {
 public:
  // Unknown names fail with KILN_ERR_NOT_FOUND and close matches. The op
  // holds a reference on the runtime, so it stays valid as long as it lives.
  Op(const Runtime& rt, const std::string& name) : runtime_(rt) { check(kiln_op_find(rt.get(), name.c_str(), &op_)); }

  // A tensor that tests false leaves an optional input out (a bias).
  std::vector<Tensor> call(const std::vector<Tensor>& inputs, const AttrList& attrs = {}) const {
    const std::vector<kiln_tensor*> handles = detail::handles_of(inputs);
    kiln_tensor* outputs[kMaxOutputs];
    size_t n = 0;
    check(kiln_op_call(runtime_.get(), op_, handles.data(), handles.size(), attrs.data(), attrs.size(), outputs,
                       kMaxOutputs, &n));
    return detail::adopt_all(outputs, n);
  }
  // For an op with exactly one output.
  Tensor operator()(const std::vector<Tensor>& inputs, const AttrList& attrs = {}) const {
    const std::vector<kiln_tensor*> handles = detail::handles_of(inputs);
    kiln_tensor* out = nullptr;
    check(kiln_op_call1(runtime_.get(), op_, handles.data(), handles.size(), attrs.data(), attrs.size(), &out));
    return Tensor::adopt(out);
  }

  const kiln_op* get() const noexcept { return op_; }
  const Runtime& runtime() const noexcept { return runtime_; }

 private:
  Runtime runtime_;
  const kiln_op* op_ = nullptr;
};

// Reverse mode from `t` (see kiln_backward): `grad` seeds it and may test
// false for a one-element `t`.
inline void backward(const Runtime& rt, const Tensor& t, const Tensor& grad = Tensor(nullptr),
                     bool retain_graph = false) {
  check(kiln_backward(rt.get(), t.get(), grad.get(), retain_graph));
}

// Grad recording off for `rt` on this thread while the scope lives.
class NoGrad {
 public:
  explicit NoGrad(const Runtime& rt) : runtime_(rt) { check(kiln_no_grad_begin(runtime_.get())); }
  // The matching end cannot fail for a begin that succeeded on this thread.
  ~NoGrad() { kiln_no_grad_end(runtime_.get()); }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  Runtime runtime_;
};

// Mixed precision in `dtype` (KILN_BF16 or KILN_F16) for `rt` on this
// thread while the scope lives (see kiln_autocast_begin).
class Autocast {
 public:
  Autocast(const Runtime& rt, kiln_dtype dtype) : runtime_(rt) { check(kiln_autocast_begin(runtime_.get(), dtype)); }
  // The matching end cannot fail for a begin that succeeded on this thread.
  ~Autocast() { kiln_autocast_end(runtime_.get()); }
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

 private:
  Runtime runtime_;
};

inline bool grad_enabled(const Runtime& rt) {
  int enabled = 0;
  check(kiln_grad_enabled(rt.get(), &enabled));
  return enabled != 0;
}

}  // namespace kiln
