#include "tensor_util.hpp"

namespace kiln::lua {

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

TensorInfo tensor_info(lua_State* L, const kiln_tensor* t) {
  TensorInfo info;
  int rank = 0;
  int64_t dims[KILN_MAX_DIMS] = {};
  check(L, kiln_tensor_rank(t, &rank));
  check(L, kiln_tensor_shape(t, dims, KILN_MAX_DIMS));
  info.shape.assign(dims, dims + rank);
  check(L, kiln_tensor_dtype(t, &info.dtype));
  check(L, kiln_tensor_device(t, &info.device, &info.device_index));
  return info;
}

bool is_floating(kiln_dtype dtype) {
  return dtype == KILN_F32 || dtype == KILN_F64 || dtype == KILN_F16 || dtype == KILN_BF16;
}

bool is_integer(kiln_dtype dtype) { return dtype == KILN_I32 || dtype == KILN_I64 || dtype == KILN_U8; }

std::string device_name(kiln_device_type type, int index) {
  return type == KILN_DEVICE_CPU ? std::string("cpu") : "cuda:" + std::to_string(index);
}

kiln_tensor* cast_tensor(lua_State* L, kiln_tensor* t, kiln_dtype dtype) {
  if (tensor_info(L, t).dtype == dtype) {
    kiln_tensor_retain(t);
    return t;
  }
  return call_op1(L, "cast", {t}, {kiln_attr_dtype("dtype", dtype)});
}

namespace {

// The elements as `dtype` (f64 or i64), without recording gradients.
template <class T>
std::vector<T> read_as(lua_State* L, kiln_tensor* t, kiln_dtype dtype) {
  kiln_tensor* detached_raw = nullptr;
  check(L, kiln_tensor_detach(t, &detached_raw));
  TensorRef detached(detached_raw);
  TensorRef converted(cast_tensor(L, detached.get(), dtype));
  int64_t n = 0;
  check(L, kiln_tensor_numel(converted.get(), &n));
  std::vector<T> values(static_cast<size_t>(n));
  check(L, kiln_tensor_read(converted.get(), values.data(), values.size() * sizeof(T)));
  return values;
}

}  // namespace

std::vector<double> read_values(lua_State* L, kiln_tensor* t) { return read_as<double>(L, t, KILN_F64); }

std::vector<int64_t> read_integers(lua_State* L, kiln_tensor* t) { return read_as<int64_t>(L, t, KILN_I64); }

kiln_tensor* make_tensor(lua_State* L, const std::vector<double>& values, const std::vector<int64_t>& shape,
                         kiln_dtype dtype, kiln_device_type device, int device_index) {
  kiln_tensor* raw = nullptr;
  // The C API wants a non-null buffer even for no elements.
  const double none = 0.0;
  check(L, kiln_tensor_from_data(runtime(L), values.empty() ? &none : values.data(), values.size() * sizeof(double),
                                 shape.data(), int(shape.size()), KILN_F64, &raw));
  TensorRef host(raw);
  TensorRef typed(cast_tensor(L, host.get(), dtype));
  if (device == KILN_DEVICE_CPU) return typed.release();
  kiln_tensor* moved = nullptr;
  check(L, kiln_tensor_to(typed.get(), device, device_index, &moved));
  return moved;
}

std::vector<int64_t> check_sizes(lua_State* L, int first, int* next) {
  std::vector<int64_t> sizes;
  if (lua_istable(L, first)) {
    const lua_Integer n = luaL_len(L, first);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_geti(L, first, i);
      if (!lua_isinteger(L, -1))
        raise_message(L, lua_pushfstring(L, "size %d of the shape is not an integer", int(i)));
      sizes.push_back(lua_tointeger(L, -1));
      lua_pop(L, 1);
    }
    *next = first + 1;
    return sizes;
  }
  int index = first;
  for (; lua_type(L, index) == LUA_TNUMBER; ++index) sizes.push_back(luaL_checkinteger(L, index));
  *next = index;
  return sizes;
}

int check_dim(lua_State* L, int index, int rank) {
  const lua_Integer dim = luaL_checkinteger(L, index);
  if (dim < -rank || dim >= rank)
    luaL_argerror(L, index,
                  lua_pushfstring(L, "dim %d is out of range for a tensor of rank %d (dims count from 0; "
                                     "-1 is the last)", int(dim), rank));
  return int(dim < 0 ? dim + rank : dim);
}

std::vector<int64_t> opt_dims(lua_State* L, int index) {
  if (lua_isnoneornil(L, index)) return {};
  if (lua_type(L, index) == LUA_TNUMBER) return {luaL_checkinteger(L, index)};
  if (!lua_istable(L, index)) luaL_typeerror(L, index, "dim or list of dims");
  int next = 0;
  return check_sizes(L, index, &next);
}

}  // namespace kiln::lua
