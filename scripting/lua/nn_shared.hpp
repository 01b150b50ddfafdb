// What the bindings of kiln.nn, kiln.optim, kiln.data and kiln.fit share:
// sub-tables of `kiln` that other parts may have created first, metamethods
// beyond __index on a kind, tables whose constructors are found by the name
// a plugin registered, and reading Lua arrays and options.
#pragma once

#include <string>
#include <vector>

#include "binding.hpp"

namespace kiln::lua {

// Pushes kiln[name] (the `kiln` table is at `kiln_index`), creating it as an
// empty table when no other part of the module made it yet.
void push_subtable(lua_State* L, int kiln_index, const char* name);

// Sets metamethods (__call, __len, __tostring, ...) on the metatable of a
// kind already made by define_kind.
void set_metamethods(lua_State* L, const char* kind, const luaL_Reg* metamethods);

// Gives the table on top of the stack an __index that resolves a missing key
// to a constructor when a plugin registered that name as `kind`: the
// constructor is `make` with the name as its first upvalue. Unregistered
// names stay nil, so `if kiln.nn.Swish then` works.
void set_registered_constructors(lua_State* L, kiln_registration_kind kind, lua_CFunction make);

// Whether some loaded plugin registered `name` as `kind`.
bool is_registered(kiln_runtime* rt, kiln_registration_kind kind, const char* name);

// Tensors of a Lua array (every entry must be a tensor); `what` names the
// argument in messages. The handles are borrowed from the array's values.
std::vector<kiln_tensor*> check_tensor_array(lua_State* L, int index, const char* what);

// Strings of a Lua array of strings; `what` names the argument in messages.
std::vector<std::string> check_string_array(lua_State* L, int index, const char* what);

// Options from the table at `index` (nil: defaults): a field's value, or the
// default when the field is absent; a field of the wrong type raises naming
// the field and the type expected.
lua_Integer opt_integer_field(lua_State* L, int index, const char* field, lua_Integer fallback);
lua_Number opt_number_field(lua_State* L, int index, const char* field, lua_Number fallback);
bool opt_boolean_field(lua_State* L, int index, const char* field, bool fallback);
// A string field; empty when absent.
std::string opt_string_field(lua_State* L, int index, const char* field);

// Raises when the table at `index` has a string key outside `known`, naming
// it and what is known: a misspelt option must not be ignored silently.
void check_known_fields(lua_State* L, int index, const char* what, const std::vector<std::string>& known);

}  // namespace kiln::lua
