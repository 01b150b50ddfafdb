// Element-wise arithmetic for the updates, made of the runtime's ops so that
// an update runs on whatever device its parameter lives on. Arguments are
// borrowed handles; results are new tensors.
#pragma once

#include <initializer_list>

#include "host.hpp"

namespace kiln_optim {

class TensorOps {
 public:
  explicit TensorOps(kiln_runtime* rt) : rt_(rt) {}

  Tensor add(kiln_tensor* a, kiln_tensor* b) const { return binary("add", a, b); }
  Tensor sub(kiln_tensor* a, kiln_tensor* b) const { return binary("sub", a, b); }
  Tensor mul(kiln_tensor* a, kiln_tensor* b) const { return binary("mul", a, b); }
  Tensor div(kiln_tensor* a, kiln_tensor* b) const { return binary("div", a, b); }
  Tensor scale(kiln_tensor* a, double s) const { return with_value("mul_scalar", a, s); }
  Tensor shift(kiln_tensor* a, double s) const { return with_value("add_scalar", a, s); }
  Tensor sqrt(kiln_tensor* a) const;
  // a + b * s: PyTorch's a.add(b, alpha=s).
  Tensor add_scaled(kiln_tensor* a, kiln_tensor* b, double s) const;
  // A tensor shaped, typed and placed like `like`, filled with `value`.
  Tensor full_like(kiln_tensor* like, double value) const;
  // Writes `src` into `dst` in place.
  void assign(kiln_tensor* dst, kiln_tensor* src) const;

 private:
  Tensor call(const char* op, std::initializer_list<kiln_tensor*> inputs, const kiln_attr* attrs, size_t n_attrs) const;
  Tensor binary(const char* op, kiln_tensor* a, kiln_tensor* b) const { return call(op, {a, b}, nullptr, 0); }
  Tensor with_value(const char* op, kiln_tensor* a, double value) const;
  kiln_runtime* rt_;
};

}  // namespace kiln_optim
