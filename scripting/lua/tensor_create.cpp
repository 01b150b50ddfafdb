// Making tensors from Lua: kiln.tensor from numbers and nested tables, the
// constant and random creators, and the conversion of arguments (to_tensor).
#include <algorithm>
#include <string>

#include "tensor_options.hpp"
#include "tensor_util.hpp"

namespace kiln::lua {
namespace {

// Values and shape of a number, a boolean or a nested table of them.
struct NestedValues {
  std::vector<double> values;
  std::vector<int64_t> shape;
  bool all_booleans = true;
};

void read_nested(lua_State* L, int index, size_t depth, NestedValues& out) {
  const int type = lua_type(L, index);
  if (type == LUA_TNUMBER || type == LUA_TBOOLEAN) {
    if (depth != out.shape.size())
      raise_message(L, "kiln.tensor: ragged nested table (a number where a table of the same depth as its "
                       "neighbours was expected)");
    out.all_booleans = out.all_booleans && type == LUA_TBOOLEAN;
    out.values.push_back(type == LUA_TBOOLEAN ? double(lua_toboolean(L, index)) : lua_tonumber(L, index));
    return;
  }
  if (type != LUA_TTABLE)
    raise_message(L, lua_pushfstring(L, "kiln.tensor: expected numbers, booleans and tables of them, got %s",
                                     luaL_typename(L, index)));
  const lua_Integer n = luaL_len(L, index);
  if (depth == out.shape.size()) {
    // The first table at this depth fixes its size; but a number seen at
    // this depth earlier means the nesting is ragged.
    if (!out.values.empty())
      raise_message(L, "kiln.tensor: ragged nested table (a table where a number was expected)");
    if (depth == KILN_MAX_DIMS) raise_message(L, "kiln.tensor: nested deeper than 8 dims");
    out.shape.push_back(n);
  } else if (depth > out.shape.size() || out.shape[depth] != n) {
    raise_message(L, lua_pushfstring(L, "kiln.tensor: ragged nested table (a row of %d entries where %d were "
                                        "expected)", int(n), int(depth < out.shape.size() ? out.shape[depth] : 0)));
  }
  luaL_checkstack(L, 2, "kiln.tensor: nested too deep");
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, index, i);
    read_nested(L, lua_gettop(L), depth + 1, out);
    lua_pop(L, 1);
  }
}

// kiln.tensor(data, {dtype=, device=, requires_grad=}): numbers give f32
// unless a dtype is named; booleans give bool.
int tensor_new(lua_State* L) {
  NestedValues nested;
  read_nested(L, 1, 0, nested);
  const bool booleans = nested.all_booleans && !nested.values.empty();
  const TensorOptions options = read_tensor_options(L, 2, booleans ? KILN_BOOL : KILN_F32, true);
  TensorRef t(make_tensor(L, nested.values, nested.shape, options.dtype, options.device, options.device_index));
  apply_requires_grad(L, t.get(), options);
  push_tensor(L, t.release());
  return 1;
}

using FillFn = kiln_status (*)(kiln_runtime*, const int64_t*, int, kiln_dtype, kiln_device_type, int, kiln_tensor**);

// kiln.zeros / kiln.empty (the C function is upvalue 1) and kiln.ones.
template <FillFn Fill>
int tensor_fill(lua_State* L) {
  int next = 0;
  const std::vector<int64_t> shape = check_sizes(L, 1, &next);
  const TensorOptions options = read_tensor_options(L, next, KILN_F32, true);
  kiln_tensor* out = nullptr;
  check(L, Fill(runtime(L), shape.data(), int(shape.size()), options.dtype, options.device, options.device_index,
                &out));
  TensorRef t(out);
  apply_requires_grad(L, t.get(), options);
  push_tensor(L, t.release());
  return 1;
}

kiln_tensor* full(lua_State* L, const std::vector<int64_t>& shape, double value, const TensorOptions& options) {
  kiln_tensor* out = nullptr;
  check(L, kiln_tensor_full(runtime(L), shape.data(), int(shape.size()), value, options.dtype, options.device,
                            options.device_index, &out));
  return out;
}

int tensor_ones(lua_State* L) {
  int next = 0;
  const std::vector<int64_t> shape = check_sizes(L, 1, &next);
  const TensorOptions options = read_tensor_options(L, next, KILN_F32, true);
  TensorRef t(full(L, shape, 1.0, options));
  apply_requires_grad(L, t.get(), options);
  push_tensor(L, t.release());
  return 1;
}

// kiln.full(shape, value, options): the shape is one table here, since a
// list of numbers could not be told apart from the value.
int tensor_full(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int next = 0;
  const std::vector<int64_t> shape = check_sizes(L, 1, &next);
  const double value = luaL_checknumber(L, 2);
  const TensorOptions options = read_tensor_options(L, 3, KILN_F32, true);
  TensorRef t(full(L, shape, value, options));
  apply_requires_grad(L, t.get(), options);
  push_tensor(L, t.release());
  return 1;
}

// kiln.rand / kiln.randn (the op's name is upvalue 1), from the runtime's stream.
int tensor_random(lua_State* L) {
  int next = 0;
  const std::vector<int64_t> shape = check_sizes(L, 1, &next);
  const TensorOptions options = read_tensor_options(L, next, KILN_F32, true);
  const std::string device = device_name(options.device, options.device_index);
  const kiln_attr attrs[] = {kiln_attr_ints("shape", shape.data(), shape.size()),
                             kiln_attr_dtype("dtype", options.dtype), kiln_attr_string("device", device.c_str())};
  TensorRef t(call_op1(L, lua_tostring(L, lua_upvalueindex(1)), {}, {std::begin(attrs), std::end(attrs)}));
  apply_requires_grad(L, t.get(), options);
  push_tensor(L, t.release());
  return 1;
}

// kiln.arange(stop) or kiln.arange(start, stop, step?): start, start+step,
// ... below stop (the values of the runtime's arange). i64 when every bound
// is an integer, f32 otherwise, unless a dtype is named.
int tensor_arange(lua_State* L) {
  int n_bounds = 0;
  bool integers = true;
  while (n_bounds < 3 && lua_type(L, n_bounds + 1) == LUA_TNUMBER) {
    integers = integers && lua_isinteger(L, n_bounds + 1);
    ++n_bounds;
  }
  if (n_bounds == 0) luaL_argerror(L, 1, "expected arange(stop) or arange(start, stop, step)");
  const double start = n_bounds == 1 ? 0.0 : lua_tonumber(L, 1);
  const double stop = lua_tonumber(L, n_bounds == 1 ? 1 : 2);
  const double step = n_bounds == 3 ? lua_tonumber(L, 3) : 1.0;
  const TensorOptions options = read_tensor_options(L, n_bounds + 1, integers ? KILN_I64 : KILN_F32, false);
  const std::string device = device_name(options.device, options.device_index);
  const kiln_attr attrs[] = {kiln_attr_float("start", start), kiln_attr_float("end", stop),
                             kiln_attr_float("step", step), kiln_attr_dtype("dtype", options.dtype),
                             kiln_attr_string("device", device.c_str())};
  push_tensor(L, call_op1(L, "arange", {}, {std::begin(attrs), std::end(attrs)}));
  return 1;
}

}  // namespace

// Lua's collector sees only a tensor's small handle, not the memory behind
// it, so a loop making tensors would keep every one alive until Lua's own
// allocations ran a cycle (hundreds of megabytes for a loop of element-wise
// ops). Each new tensor moves the incremental collector on as if its
// elements, at 4 bytes each (pacing needs no more precision), had been
// allocated in Lua.
void push_tensor(lua_State* L, kiln_tensor* t) {
  push_handle(L, t, kTensor);
  int64_t numel = 0;
  if (kiln_tensor_numel(t, &numel) != KILN_OK || numel < 1024) return;
  lua_gc(L, LUA_GCSTEP, int(std::min<int64_t>(numel / 256, 1 << 20)));  // in KiB
}

kiln_tensor* check_tensor(lua_State* L, int index) { return static_cast<kiln_tensor*>(check_handle(L, index, kTensor)); }

kiln_tensor* to_tensor(lua_State* L, int index, kiln_tensor* like, bool* owned) {
  *owned = false;
  if (lua_type(L, index) == LUA_TUSERDATA) return check_tensor(L, index);
  if (lua_type(L, index) == LUA_TNUMBER && like != nullptr) {
    const TensorInfo info = tensor_info(L, like);
    kiln_tensor* out = nullptr;
    check(L, kiln_tensor_full(runtime(L), nullptr, 0, lua_tonumber(L, index), info.dtype, info.device,
                              info.device_index, &out));
    *owned = true;
    return out;
  }
  if (lua_type(L, index) == LUA_TNUMBER || lua_type(L, index) == LUA_TTABLE) {
    NestedValues nested;
    read_nested(L, index, 0, nested);
    kiln_tensor* out = make_tensor(L, nested.values, nested.shape, KILN_F32, KILN_DEVICE_CPU, 0);
    *owned = true;
    return out;
  }
  luaL_typeerror(L, index, "kiln.Tensor, number or table of numbers");
  return nullptr;
}

void open_tensor_creation(lua_State* L) {
  const luaL_Reg functions[] = {
      {"tensor", guarded<tensor_new>},
      {"zeros", guarded<tensor_fill<kiln_tensor_zeros>>},
      {"empty", guarded<tensor_fill<kiln_tensor_empty>>},
      {"ones", guarded<tensor_ones>},
      {"full", guarded<tensor_full>},
      {"arange", guarded<tensor_arange>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, functions, 0);
  for (const char* name : {"rand", "randn"}) {
    lua_pushstring(L, name);
    lua_pushcclosure(L, guarded<tensor_random>, 1);
    lua_setfield(L, -2, name);
  }
}

}  // namespace kiln::lua
