// AttrList: a Lua table of options as kiln_attr entries.
#include <algorithm>

#include "binding.hpp"

namespace kiln::lua {
namespace {

bool contains(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

[[noreturn]] void bad_option(lua_State* L, const char* key, const char* expected) {
  raise_message(L, lua_pushfstring(L, "option '%s': %s, got %s", key, expected, luaL_typename(L, -1)));
}

}  // namespace

AttrList::AttrList(lua_State* L, int table_index, std::vector<std::string> skip, std::vector<std::string> dtype_keys) {
  if (lua_isnoneornil(L, table_index)) return;
  luaL_checktype(L, table_index, LUA_TTABLE);
  table_index = lua_absindex(L, table_index);
  lua_pushnil(L);
  while (lua_next(L, table_index) != 0) {
    // Only string keys are options; lua_tostring on a number key would
    // change the key and break lua_next, so type first.
    if (lua_type(L, -2) != LUA_TSTRING) {
      lua_pop(L, 1);
      continue;
    }
    strings_.emplace_back(lua_tostring(L, -2));
    const char* key = strings_.back().c_str();
    if (contains(skip, key)) {
      lua_pop(L, 1);
      continue;
    }
    switch (lua_type(L, -1)) {
      case LUA_TNUMBER:
        if (lua_isinteger(L, -1)) attrs_.push_back(kiln_attr_int(key, lua_tointeger(L, -1)));
        else attrs_.push_back(kiln_attr_float(key, lua_tonumber(L, -1)));
        break;
      case LUA_TBOOLEAN:
        attrs_.push_back(kiln_attr_bool(key, lua_toboolean(L, -1)));
        break;
      case LUA_TSTRING:
        if (contains(dtype_keys, key)) {
          attrs_.push_back(kiln_attr_dtype(key, check_dtype(L, -1)));
        } else {
          strings_.emplace_back(lua_tostring(L, -1));
          attrs_.push_back(kiln_attr_string(key, strings_.back().c_str()));
        }
        break;
      case LUA_TTABLE: {
        // A list of numbers: integers when every entry is one, else floats.
        const lua_Integer n = luaL_len(L, -1);
        std::vector<int64_t> ints;
        std::vector<double> floats;
        bool all_integers = true;
        for (lua_Integer i = 1; i <= n; ++i) {
          lua_geti(L, -1, i);
          if (lua_type(L, -1) != LUA_TNUMBER) bad_option(L, key, "expected a list of numbers");
          all_integers = all_integers && lua_isinteger(L, -1);
          ints.push_back(lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0);
          floats.push_back(lua_tonumber(L, -1));
          lua_pop(L, 1);
        }
        if (all_integers) {
          const std::vector<int64_t>& stored = ints_.emplace_back(std::move(ints));
          attrs_.push_back(kiln_attr_ints(key, stored.data(), stored.size()));
        } else {
          const std::vector<double>& stored = floats_.emplace_back(std::move(floats));
          attrs_.push_back(kiln_attr_floats(key, stored.data(), stored.size()));
        }
        break;
      }
      case LUA_TUSERDATA:
        if (kiln_tensor* t = static_cast<kiln_tensor*>(test_handle(L, -1, kTensor))) {
          attrs_.push_back(kiln_attr_tensor(key, t));
          break;
        }
        [[fallthrough]];
      default:
        bad_option(L, key, "expected a number, a boolean, a string, a list of numbers or a tensor");
    }
    lua_pop(L, 1);
  }
}

}  // namespace kiln::lua
