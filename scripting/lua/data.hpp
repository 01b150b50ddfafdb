// The kinds of kiln.data (data.cpp) and examples as Lua tables
// (data_example.cpp), for the other parts that take them.
#pragma once

#include <memory>

#include "binding.hpp"

namespace kiln::lua {

constexpr const char* kSource = "kiln.Source";
constexpr const char* kTransform = "kiln.Transform";
constexpr const char* kLoader = "kiln.Loader";

inline kiln_loader* check_loader(lua_State* L, int index) {
  return static_cast<kiln_loader*>(check_handle(L, index, kLoader));
}

using ExampleRef = std::unique_ptr<kiln_example, decltype(&kiln_example_release)>;

// Pushes the fields of `ex` as a table field name -> tensor.
void push_example(lua_State* L, const kiln_example* ex);
// A new example holding the string-keyed tensors of the table at `index`.
ExampleRef check_example(lua_State* L, int index);

}  // namespace kiln::lua
