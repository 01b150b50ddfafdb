// The options table of the tensor creators: {dtype=, device=, requires_grad=}.
#pragma once

#include "binding.hpp"

namespace kiln::lua {

struct TensorOptions {
  kiln_dtype dtype;
  kiln_device_type device = KILN_DEVICE_CPU;
  int device_index = 0;
  bool requires_grad = false;
};

// Reads the table at `index` (none or nil: the defaults); an unknown key is
// an error naming it, so that a misspelt option is never ignored.
TensorOptions read_tensor_options(lua_State* L, int index, kiln_dtype default_dtype, bool allow_requires_grad);
void apply_requires_grad(lua_State* L, kiln_tensor* t, const TensorOptions& options);

// kiln.tensor, kiln.zeros, ... into the table on top of the stack.
void open_tensor_creation(lua_State* L);

}  // namespace kiln::lua
