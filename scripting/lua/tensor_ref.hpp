// Owning a tensor reference in C++ code that may raise a Lua error: Lua is
// compiled as C++ here, so the error unwinds and the reference is dropped.
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "binding.hpp"

namespace kiln::lua {

struct TensorRelease {
  void operator()(kiln_tensor* t) const { kiln_tensor_release(t); }
};
using TensorRef = std::unique_ptr<kiln_tensor, TensorRelease>;

// An argument of a bound function as a tensor (see to_tensor), released
// when it was made for the call.
class TensorArg {
 public:
  TensorArg(lua_State* L, int index, kiln_tensor* like = nullptr) : t_(to_tensor(L, index, like, &owned_)) {}
  ~TensorArg() {
    if (owned_) kiln_tensor_release(t_);
  }
  TensorArg(const TensorArg&) = delete;
  TensorArg& operator=(const TensorArg&) = delete;
  kiln_tensor* get() const { return t_; }

 private:
  bool owned_ = false;
  kiln_tensor* t_;
};

// Calls a one-output op and gives the caller its reference (raising on failure).
kiln_tensor* call_op1(lua_State* L, const char* op, std::initializer_list<kiln_tensor*> inputs,
                      const std::vector<kiln_attr>& attrs = {});

}  // namespace kiln::lua
