// Helpers of the tensor bindings: what a tensor is, its values on the host,
// and reading shapes and dims from Lua arguments.
//
// Conventions of the Lua tensor API (documented for scripts in tensor.cpp):
// dims count from 0 as in the runtime and in kiln.F's attributes (negative
// dims count from the end); positions inside a dim (t[i], t:slice) count
// from 1 as everywhere in Lua; values are never shifted (argmax gives the
// 0-based class index that a target holds).
#pragma once

#include <string>
#include <vector>

#include "binding.hpp"
#include "tensor_ref.hpp"

namespace kiln::lua {

struct TensorInfo {
  std::vector<int64_t> shape;
  kiln_dtype dtype;
  kiln_device_type device;
  int device_index;
  int64_t numel() const;
};
TensorInfo tensor_info(lua_State* L, const kiln_tensor* t);

bool is_floating(kiln_dtype dtype);
bool is_integer(kiln_dtype dtype);  // the integer dtypes, bool excluded
std::string device_name(kiln_device_type type, int index);

// The elements, row-major, converted to double (any dtype or device).
std::vector<double> read_values(lua_State* L, kiln_tensor* t);
// The same for integer and bool tensors, exactly.
std::vector<int64_t> read_integers(lua_State* L, kiln_tensor* t);
// A tensor of `values` with `shape`, cast to `dtype`, on the given device.
kiln_tensor* make_tensor(lua_State* L, const std::vector<double>& values, const std::vector<int64_t>& shape,
                         kiln_dtype dtype, kiln_device_type device, int device_index);
// A cast (a new reference on `t` itself when it has `dtype` already).
kiln_tensor* cast_tensor(lua_State* L, kiln_tensor* t, kiln_dtype dtype);

// Sizes given as numbers from `first` up to the first non-number argument,
// or as one table at `first`: kiln.zeros(2, 3) and kiln.zeros({2, 3}).
// *next receives the index after them.
std::vector<int64_t> check_sizes(lua_State* L, int first, int* next);
// A dim (0-based; negative counts from the end) valid for `rank`, as 0..rank-1.
int check_dim(lua_State* L, int index, int rank);
// Dims given as nil (all: an empty list), one number or a list of numbers.
std::vector<int64_t> opt_dims(lua_State* L, int index);

}  // namespace kiln::lua
