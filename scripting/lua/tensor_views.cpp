// New views and conversions of a tensor: t:reshape(...)/t:view(...),
// t:permute(...), t:transpose(a, b), t:slice(dim, start, stop), t[i],
// t:contiguous(), t:to(device), t:type(dtype) and t:float() ... t:bool().
#include <algorithm>

#include "tensor_methods.hpp"
#include "tensor_util.hpp"

namespace kiln::lua {
namespace {

kiln_tensor* reshape(lua_State* L, kiln_tensor* t, const std::vector<int64_t>& shape) {
  return call_op1(L, "reshape", {t}, {kiln_attr_ints("shape", shape.data(), shape.size())});
}

kiln_tensor* slice(lua_State* L, kiln_tensor* t, int dim, int64_t start, int64_t end) {
  return call_op1(L, "slice", {t},
                  {kiln_attr_int("dim", dim), kiln_attr_int("start", start), kiln_attr_int("end", end)});
}

// t:reshape(2, 3) or t:reshape({2, 3}); -1 once for "the rest". t:view is
// the same: reshape gives a view whenever the layout allows one.
int tensor_reshape(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  int next = 0;
  push_tensor(L, reshape(L, t, check_sizes(L, 2, &next)));
  return 1;
}

int tensor_permute(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  int next = 0;
  const std::vector<int64_t> dims = check_sizes(L, 2, &next);
  push_tensor(L, call_op1(L, "permute", {t}, {kiln_attr_ints("dims", dims.data(), dims.size())}));
  return 1;
}

int tensor_transpose(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  const int rank = int(tensor_info(L, t).shape.size());
  const int a = check_dim(L, 2, rank), b = check_dim(L, 3, rank);
  push_tensor(L, call_op1(L, "transpose", {t}, {kiln_attr_int("dim0", a), kiln_attr_int("dim1", b)}));
  return 1;
}

// t:slice(dim, start, stop): positions start..stop of `dim`, both included
// and counted from 1, negative ones from the end (-1 is the last), clamped
// to the dim like string.sub; stop defaults to -1.
int tensor_slice(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  const TensorInfo info = tensor_info(L, t);
  const int dim = check_dim(L, 2, int(info.shape.size()));
  const int64_t n = info.shape[size_t(dim)];
  int64_t first = luaL_checkinteger(L, 3);
  int64_t last = luaL_optinteger(L, 4, -1);
  if (first < 0) first += n + 1;
  if (last < 0) last += n + 1;
  first = std::max<int64_t>(first, 1);
  last = std::min(last, n);
  const int64_t start = first - 1;
  push_tensor(L, slice(L, t, dim, start, std::max(last, start)));
  return 1;
}

int tensor_contiguous(lua_State* L) {
  kiln_tensor* out = nullptr;
  check(L, kiln_tensor_contiguous(check_tensor(L, 1), &out));
  push_tensor(L, out);
  return 1;
}

int tensor_to(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  kiln_device_type device = KILN_DEVICE_CPU;
  int index = 0;
  check_device(L, 2, &device, &index);
  kiln_tensor* out = nullptr;
  check(L, kiln_tensor_to(t, device, index, &out));
  push_tensor(L, out);
  return 1;
}

int tensor_type(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  push_tensor(L, cast_tensor(L, t, check_dtype(L, 2)));
  return 1;
}

// t:float(), t:double(), ...: the dtype's name is upvalue 1.
int tensor_cast_to_upvalue(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  push_tensor(L, cast_tensor(L, t, check_dtype(L, lua_upvalueindex(1))));
  return 1;
}

}  // namespace

int tensor_row(lua_State* L, kiln_tensor* t, lua_Integer position) {
  const TensorInfo info = tensor_info(L, t);
  if (info.shape.empty()) raise_message(L, "t[i]: a 0-d tensor has no rows (use t:item())");
  const int64_t n = info.shape[0];
  const int64_t row = position < 0 ? position + n + 1 : position;
  if (row < 1 || row > n)
    raise_message(L, lua_pushfstring(L, "t[%d]: index out of range for dim 0 of size %d (positions count from 1)",
                                     int(position), int(n)));
  TensorRef part(slice(L, t, 0, row - 1, row));
  const std::vector<int64_t> rest(info.shape.begin() + 1, info.shape.end());
  TensorRef view(reshape(L, part.get(), rest));
  if (rest.empty()) {
    lua_pushnumber(L, read_values(L, view.get())[0]);
    return 1;
  }
  push_tensor(L, view.release());
  return 1;
}

void add_tensor_view_methods(lua_State* L) {
  const luaL_Reg methods[] = {
      {"reshape", guarded<tensor_reshape>},       {"view", guarded<tensor_reshape>},
      {"permute", guarded<tensor_permute>},       {"transpose", guarded<tensor_transpose>},
      {"slice", guarded<tensor_slice>},           {"contiguous", guarded<tensor_contiguous>},
      {"to", guarded<tensor_to>},                 {"type", guarded<tensor_type>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, methods, 0);
  const char* const casts[][2] = {{"float", "f32"}, {"double", "f64"}, {"half", "f16"},
                                  {"long", "i64"},  {"int", "i32"},    {"bool", "bool"}};
  for (const auto& [method, dtype] : casts) {
    lua_pushstring(L, dtype);
    lua_pushcclosure(L, guarded<tensor_cast_to_upvalue>, 1);
    lua_setfield(L, -2, method);
  }
}

}  // namespace kiln::lua
