// The parts of the kiln.Tensor method table, one per file; each adds its
// functions to the table on top of the stack.
#pragma once

#include "binding.hpp"

namespace kiln::lua {

void add_tensor_query_methods(lua_State* L);     // shape, size, item, totable, ... (tensor_query.cpp)
void add_tensor_view_methods(lua_State* L);      // reshape, slice, to, type, ...   (tensor_views.cpp)
void add_tensor_math_methods(lua_State* L);      // sum, mean, max, argmax, ...     (tensor_math.cpp)
void add_tensor_autograd_methods(lua_State* L);  // backward, detach, ...           (tensor_autograd.cpp)
// Metamethods on the metatable on top of the stack.
void add_tensor_arithmetic_metamethods(lua_State* L);  // __add, __eq, __lt, ... (tensor_math.cpp)
void add_tensor_print_metamethods(lua_State* L);       // __tostring, __len      (tensor_query.cpp)

// t[i]: row i (from 1) of the first dim, a number for a 1-D tensor (tensor_views.cpp).
int tensor_row(lua_State* L, kiln_tensor* t, lua_Integer position);
// t.grad (tensor_autograd.cpp).
int tensor_grad(lua_State* L, kiln_tensor* t);

}  // namespace kiln::lua
