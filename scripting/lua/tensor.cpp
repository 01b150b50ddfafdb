// kiln.Tensor: the tensor userdata of scripts.
//
// Conventions:
// - dims count from 0, as in the runtime and in kiln.F's attributes
//   (t:size(0) is the batch size; -1 is the last dim);
// - positions inside a dim count from 1, as everywhere in Lua: t[1] is the
//   first row, t:slice(0, 2, 3) rows 2 and 3 (both ends included, negative
//   positions from the end, like string.sub);
// - values are never shifted: t:argmax(1) gives the 0-based class index a
//   target tensor holds, kiln.arange(3) gives 0, 1, 2.
// - t.grad is a field (the gradient, or nil); everything else is a method.
// - every op of the runtime, plugins' ops included, is a method unless a
//   method below has its name: t:abs(), t:maximum(u), t:eq(0),
//   t:softplus{beta = 2} are kiln.F.abs(t), kiln.F.maximum(t, u), ... (the
//   same arguments after t: inputs, then an optional table of attributes).
#include <string_view>

#include "tensor_methods.hpp"
#include "tensor_options.hpp"

namespace kiln::lua {
namespace {

// __index: t[i] is a row, t.grad the gradient, other keys the methods
// (the method table is upvalue 1), then the runtime's ops, whose functions
// join the method table when first used.
int tensor_index(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    if (!lua_isinteger(L, 2)) raise_message(L, "t[i]: the index must be an integer");
    return tensor_row(L, t, lua_tointeger(L, 2));
  }
  if (lua_type(L, 2) == LUA_TSTRING && std::string_view(lua_tostring(L, 2)) == "grad") return tensor_grad(L, t);
  lua_pushvalue(L, 2);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL || lua_type(L, 2) != LUA_TSTRING) return 1;
  if (!has_op(L, lua_tostring(L, 2))) return 1;  // nil
  push_op_function(L, 2);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, lua_upvalueindex(1));
  return 1;
}

}  // namespace

void open_tensor(lua_State* L) {
  const luaL_Reg no_methods[] = {{nullptr, nullptr}};
  define_kind(L, kTensor, [](void* t) { kiln_tensor_release(static_cast<kiln_tensor*>(t)); }, no_methods);
  luaL_getmetatable(L, kTensor);
  lua_getfield(L, -1, "__index");
  add_tensor_query_methods(L);
  add_tensor_view_methods(L);
  add_tensor_math_methods(L);
  add_tensor_autograd_methods(L);
  lua_pushcclosure(L, guarded<tensor_index>, 1);
  lua_setfield(L, -2, "__index");
  add_tensor_arithmetic_metamethods(L);
  add_tensor_print_metamethods(L);
  lua_pop(L, 1);
  open_tensor_creation(L);
}

}  // namespace kiln::lua
