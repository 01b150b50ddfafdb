// kiln.F (also kiln.nn.functional): every op of the runtime by name.
//   kiln.F.relu(x)
//   kiln.F.cross_entropy(logits, target, {label_smoothing = 0.1})
//   kiln.F.conv2d(x, w, b, {padding = {2, 2}})
//   local values, rest = kiln.F.split(x, {sizes = {2, 3}, dim = 1})
// Positional arguments are the op's inputs (tensors; nil leaves an optional
// input out; numbers become scalars like the first tensor), then an
// optional table of attributes. An op with several outputs returns them all.
#include <vector>

#include "binding.hpp"
#include "tensor_ref.hpp"

namespace kiln::lua {
namespace {

// Whether the last argument is the attribute table: a table that is not a
// list (a nested table of numbers would be an input).
bool has_attribute_table(lua_State* L, int top) {
  return top > 0 && lua_type(L, top) == LUA_TTABLE && lua_rawlen(L, top) == 0;
}

// The op's function; its name is upvalue 1.
int call_named_op(lua_State* L) {
  const char* name = lua_tostring(L, lua_upvalueindex(1));
  const int top = lua_gettop(L);
  const bool with_attrs = has_attribute_table(L, top);
  const int n_inputs = with_attrs ? top - 1 : top;
  kiln_tensor* like = nullptr;
  for (int i = 1; i <= n_inputs && like == nullptr; ++i) like = static_cast<kiln_tensor*>(test_handle(L, i, kTensor));
  std::vector<TensorRef> made;  // inputs made from numbers and tables, released on return or error
  std::vector<kiln_tensor*> inputs;
  for (int i = 1; i <= n_inputs; ++i) {
    if (lua_isnil(L, i)) {
      inputs.push_back(nullptr);
      continue;
    }
    bool owned = false;
    kiln_tensor* t = to_tensor(L, i, like, &owned);
    if (owned) made.emplace_back(t);
    inputs.push_back(t);
  }
  const AttrList attrs(L, with_attrs ? top : top + 1, {}, {"dtype"});  // top + 1: none
  return call_op(L, name, inputs.data(), inputs.size(), attrs.data(), attrs.size());
}

// __index of kiln.F: looks the op up (an unknown name raises with the
// runtime's close matches) and keeps its function in the table.
int functional_index(lua_State* L) {
  const char* name = luaL_checkstring(L, 2);
  const kiln_op* op = nullptr;
  check(L, kiln_op_find(runtime(L), name, &op));
  push_op_function(L, 2);
  lua_pushvalue(L, 2);
  lua_pushvalue(L, -2);
  lua_rawset(L, 1);
  return 1;
}

}  // namespace

void push_op_function(lua_State* L, int name_index) {
  lua_pushvalue(L, name_index);
  lua_pushcclosure(L, guarded<call_named_op>, 1);
}

void open_functional(lua_State* L) {
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, guarded<functional_index>);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  // kiln.nn may exist already (made by the nn part) or not yet.
  if (lua_getfield(L, -2, "nn") != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -4, "nn");
  }
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "functional");
  lua_pop(L, 1);
  lua_setfield(L, -2, "F");
}

}  // namespace kiln::lua
