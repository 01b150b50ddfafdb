// What a tensor is and holds, read from Lua: t:shape(), t:size(d), t:dim(),
// t:numel(), #t, t:dtype(), t:device(), t:item(), t:totable(), tostring(t).
#include <cstdio>
#include <string>

#include "tensor_methods.hpp"
#include "tensor_util.hpp"

namespace kiln::lua {
namespace {

// Tensors with at most this many elements print their values.
constexpr int64_t kPrintValuesUpTo = 64;

int tensor_shape(lua_State* L) {
  const TensorInfo info = tensor_info(L, check_tensor(L, 1));
  lua_createtable(L, int(info.shape.size()), 0);
  for (size_t i = 0; i < info.shape.size(); ++i) {
    lua_pushinteger(L, info.shape[i]);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  return 1;
}

int tensor_size(lua_State* L) {
  const TensorInfo info = tensor_info(L, check_tensor(L, 1));
  if (lua_isnoneornil(L, 2)) return tensor_shape(L);
  lua_pushinteger(L, info.shape[size_t(check_dim(L, 2, int(info.shape.size())))]);
  return 1;
}

int tensor_dim(lua_State* L) {
  lua_pushinteger(L, lua_Integer(tensor_info(L, check_tensor(L, 1)).shape.size()));
  return 1;
}

int tensor_numel(lua_State* L) {
  int64_t n = 0;
  check(L, kiln_tensor_numel(check_tensor(L, 1), &n));
  lua_pushinteger(L, n);
  return 1;
}

int tensor_len(lua_State* L) {
  const TensorInfo info = tensor_info(L, check_tensor(L, 1));
  if (info.shape.empty()) raise_message(L, "#t: a 0-d tensor has no length (use t:item())");
  lua_pushinteger(L, info.shape[0]);
  return 1;
}

int tensor_dtype(lua_State* L) {
  lua_pushstring(L, dtype_name(tensor_info(L, check_tensor(L, 1)).dtype));
  return 1;
}

int tensor_device(lua_State* L) {
  const TensorInfo info = tensor_info(L, check_tensor(L, 1));
  lua_pushstring(L, device_name(info.device, info.device_index).c_str());
  return 1;
}

// The elements as Lua values: integers for integer dtypes, booleans for
// bool, numbers otherwise.
class LuaValues {
 public:
  LuaValues(lua_State* L, kiln_tensor* t, const TensorInfo& info) : dtype_(info.dtype) {
    if (is_floating(dtype_)) floats_ = read_values(L, t);
    else integers_ = read_integers(L, t);
  }
  void push(lua_State* L, size_t i) const {
    if (is_floating(dtype_)) lua_pushnumber(L, floats_[i]);
    else if (dtype_ == KILN_BOOL) lua_pushboolean(L, integers_[i] != 0);
    else lua_pushinteger(L, integers_[i]);
  }

 private:
  kiln_dtype dtype_;
  std::vector<double> floats_;
  std::vector<int64_t> integers_;
};

int tensor_item(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  const TensorInfo info = tensor_info(L, t);
  if (info.numel() != 1)
    raise_message(L, lua_pushfstring(L, "t:item(): the tensor has %d elements, item() needs exactly one",
                                     int(info.numel())));
  LuaValues(L, t, info).push(L, 0);
  return 1;
}

// Pushes the nested table of dims [dim, rank) starting at element *next.
void push_nested(lua_State* L, const LuaValues& values, const std::vector<int64_t>& shape, size_t dim, size_t* next) {
  if (dim == shape.size()) {
    values.push(L, (*next)++);
    return;
  }
  luaL_checkstack(L, 2, "t:totable(): nested too deep");
  lua_createtable(L, int(shape[dim]), 0);
  for (int64_t i = 0; i < shape[dim]; ++i) {
    push_nested(L, values, shape, dim + 1, next);
    lua_rawseti(L, -2, i + 1);
  }
}

int tensor_totable(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  const TensorInfo info = tensor_info(L, t);
  size_t next = 0;
  push_nested(L, LuaValues(L, t, info), info.shape, 0, &next);
  return 1;
}

// "f32[2, 3] on cpu", then the values of a small tensor as nested braces.
void append_nested(std::string& out, const std::vector<double>& values, const std::vector<int64_t>& shape, size_t dim,
                   size_t* next) {
  if (dim == shape.size()) {
    char number[32];
    std::snprintf(number, sizeof number, "%.6g", values[(*next)++]);
    out += number;
    return;
  }
  out += '{';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) out += ", ";
    append_nested(out, values, shape, dim + 1, next);
  }
  out += '}';
}

int tensor_tostring(lua_State* L) {
  kiln_tensor* t = static_cast<kiln_tensor*>(test_handle(L, 1, kTensor));
  if (t == nullptr) {
    lua_pushliteral(L, "kiln.Tensor (closed)");
    return 1;
  }
  const TensorInfo info = tensor_info(L, t);
  std::string text = dtype_name(info.dtype);
  text += '[';
  for (size_t i = 0; i < info.shape.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(info.shape[i]);
  text += "] on " + device_name(info.device, info.device_index);
  if (info.numel() <= kPrintValuesUpTo) {
    text += '\n';
    size_t next = 0;
    append_nested(text, read_values(L, t), info.shape, 0, &next);
  }
  lua_pushlstring(L, text.data(), text.size());
  return 1;
}

}  // namespace

void add_tensor_query_methods(lua_State* L) {
  const luaL_Reg methods[] = {
      {"shape", guarded<tensor_shape>},   {"size", guarded<tensor_size>},       {"dim", guarded<tensor_dim>},
      {"numel", guarded<tensor_numel>},   {"dtype", guarded<tensor_dtype>},     {"device", guarded<tensor_device>},
      {"item", guarded<tensor_item>},     {"totable", guarded<tensor_totable>}, {nullptr, nullptr},
  };
  luaL_setfuncs(L, methods, 0);
}

void add_tensor_print_metamethods(lua_State* L) {
  const luaL_Reg metamethods[] = {
      {"__tostring", guarded<tensor_tostring>},
      {"__len", guarded<tensor_len>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, metamethods, 0);
}

}  // namespace kiln::lua
