// kiln.ops(): the ops of the runtime, built-in and from plugins, as tables
// (what kiln.F and tensor methods can call, and how):
//   for _, op in ipairs(kiln.ops()) do print(op.name, #op.inputs) end
//   kiln.ops("split").attrs[2]  --> {name = "sizes", type = "ints", required = true}
// Each table: name, plugin (nil for a built-in op), inputs (list of {name,
// optional, variadic}), attrs (list of {name, type, required, default,
// default_text}), backward,
// writes_inputs, view, and kernels = {cpu = {"f32", ...}, cuda = {...}}.
#include <type_traits>

#include "binding.hpp"

namespace kiln::lua {
namespace {

// The names kiln.ops() gives attribute types, indexed by kiln_attr_type.
constexpr const char* kAttrTypeNames[] = {"int", "float", "bool", "ints", "floats", "string", "dtype", "tensor"};

void set_boolean(lua_State* L, const char* key, int value) {
  lua_pushboolean(L, value);
  lua_setfield(L, -2, key);
}

template <class T>
void push_list(lua_State* L, const T* values, size_t n) {
  lua_createtable(L, int(n), 0);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) lua_pushinteger(L, lua_Integer(values[i]));
    else lua_pushnumber(L, values[i]);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
}

// An attribute default as the Lua value a script would pass for it.
void push_attr_value(lua_State* L, const kiln_attr& a) {
  switch (a.type) {
    case KILN_ATTR_INT: lua_pushinteger(L, a.value.i); return;
    case KILN_ATTR_FLOAT: lua_pushnumber(L, a.value.f); return;
    case KILN_ATTR_BOOL: lua_pushboolean(L, a.value.b); return;
    case KILN_ATTR_INTS: push_list(L, a.value.ints.data, a.value.ints.len); return;
    case KILN_ATTR_FLOATS: push_list(L, a.value.floats.data, a.value.floats.len); return;
    case KILN_ATTR_STRING: lua_pushstring(L, a.value.s); return;
    case KILN_ATTR_DTYPE: lua_pushstring(L, dtype_name(a.value.dtype)); return;
    case KILN_ATTR_TENSOR: break;  // never an op attribute
  }
  lua_pushnil(L);
}

void push_inputs(lua_State* L, const kiln_op* op, size_t n) {
  lua_createtable(L, int(n), 0);
  for (size_t i = 0; i < n; ++i) {
    kiln_op_input_info input{};
    input.size = sizeof input;
    check(L, kiln_op_input_get(op, i, &input));
    lua_createtable(L, 0, 3);
    lua_pushstring(L, input.name);
    lua_setfield(L, -2, "name");
    set_boolean(L, "optional", input.optional);
    set_boolean(L, "variadic", input.variadic);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
}

void push_attrs(lua_State* L, const kiln_op* op, size_t n) {
  lua_createtable(L, int(n), 0);
  for (size_t i = 0; i < n; ++i) {
    kiln_op_attr_info attr{};
    attr.size = sizeof attr;
    check(L, kiln_op_attr_get(op, i, &attr));
    lua_createtable(L, 0, 5);
    lua_pushstring(L, attr.name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, kAttrTypeNames[attr.type]);
    lua_setfield(L, -2, "type");
    set_boolean(L, "required", attr.required);
    if (!attr.required) {
      push_attr_value(L, attr.default_value);
      lua_setfield(L, -2, "default");
      lua_pushstring(L, attr.default_text);
      lua_setfield(L, -2, "default_text");
    }
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
}

// {"f32", "f64", ...}: the dtypes whose bit is set, in kiln_dtype order.
void push_dtypes(lua_State* L, uint32_t bits) {
  lua_newtable(L);
  lua_Integer n = 0;
  for (int d = KILN_F32; d <= KILN_BOOL; ++d) {
    if (!(bits & (1u << unsigned(d)))) continue;
    lua_pushstring(L, dtype_name(kiln_dtype(d)));
    lua_rawseti(L, -2, ++n);
  }
}

void push_op(lua_State* L, const kiln_op* op) {
  kiln_op_info info{};
  info.size = sizeof info;
  check(L, kiln_op_info_get(op, &info));
  lua_createtable(L, 0, 10);
  lua_pushstring(L, info.name);
  lua_setfield(L, -2, "name");
  if (info.plugin[0] != '\0') {
    lua_pushstring(L, info.plugin);
    lua_setfield(L, -2, "plugin");
  }
  push_inputs(L, op, info.num_inputs);
  lua_setfield(L, -2, "inputs");
  push_attrs(L, op, info.num_attrs);
  lua_setfield(L, -2, "attrs");
  set_boolean(L, "backward", info.has_backward);
  set_boolean(L, "writes_inputs", info.writes_inputs);
  set_boolean(L, "view", info.is_view);
  lua_createtable(L, 0, 2);
  push_dtypes(L, info.cpu_dtypes);
  lua_setfield(L, -2, "cpu");
  push_dtypes(L, info.cuda_dtypes);
  lua_setfield(L, -2, "cuda");
  lua_setfield(L, -2, "kernels");
}

// kiln.ops([name]): every op as a list, or the one named (an unknown name
// raises with the close matches).
int ops(lua_State* L) {
  kiln_runtime* rt = runtime(L);
  if (!lua_isnoneornil(L, 1)) {
    const kiln_op* op = nullptr;
    check(L, kiln_op_find(rt, luaL_checkstring(L, 1), &op));
    push_op(L, op);
    return 1;
  }
  size_t count = 0;
  check(L, kiln_op_count(rt, &count));
  lua_createtable(L, int(count), 0);
  for (size_t i = 0; i < count; ++i) {
    const kiln_op* op = nullptr;
    check(L, kiln_op_at(rt, i, &op));
    push_op(L, op);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  return 1;
}

}  // namespace

void open_op_listing(lua_State* L) {
  lua_pushcfunction(L, guarded<ops>);
  lua_setfield(L, -2, "ops");
}

}  // namespace kiln::lua
