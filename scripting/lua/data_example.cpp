// Examples cross into Lua as plain tables, field name -> tensor:
// {input = <tensor>, target = <tensor>}.
#include "data.hpp"

namespace kiln::lua {

void push_example(lua_State* L, const kiln_example* ex) {
  size_t n = 0;
  check(L, kiln_example_field_count(ex, &n));
  push_named_tensors(L, n, [&](size_t i, const char** name, kiln_tensor** t) {
    return kiln_example_field(ex, i, name, t);
  });
}

ExampleRef check_example(lua_State* L, int index) {
  index = lua_absindex(L, index);
  luaL_checktype(L, index, LUA_TTABLE);
  kiln_example* raw = nullptr;
  check(L, kiln_example_create(runtime(L), &raw));
  ExampleRef ex(raw, kiln_example_release);
  lua_pushnil(L);
  while (lua_next(L, index)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "an example is a table of field name -> tensor; it has a %s key", luaL_typename(L, -2));
    if (!test_handle(L, -1, kTensor))
      luaL_error(L, "field '%s' of an example is a %s; expected a tensor", lua_tostring(L, -2),
                 luaL_typename(L, -1));
    check(L, kiln_example_set(ex.get(), lua_tostring(L, -2), check_tensor(L, -1)));
    lua_pop(L, 1);
  }
  return ex;
}

}  // namespace kiln::lua
