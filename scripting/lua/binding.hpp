// What every part of the kiln Lua module shares: the runtime of a state,
// raising runtime errors as Lua errors, handles as userdata, and
// configurations read from Lua tables. Lua is compiled as C++ here, so a
// Lua error unwinds C++ frames: objects on the stack are destroyed.
#pragma once

#include <lua.hpp>

#include <deque>
#include <exception>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::lua {

// The runtime a state was opened for (kept in the Lua registry).
kiln_runtime* runtime(lua_State* L);

// Raises a Lua error carrying kiln_last_error(), with the position of the
// calling Lua code in front (like luaL_error). Never returns.
[[noreturn]] void raise_last_error(lua_State* L);
// The same, remembering `status`: a host whose script lets this error
// through gets `status` back from kiln_script_run_* instead of KILN_ERR_SCRIPT.
[[noreturn]] void raise_status(lua_State* L, kiln_status status);
// Raises unless `status` is KILN_OK.
inline void check(lua_State* L, kiln_status status) {
  if (status != KILN_OK) raise_status(L, status);
}

// Raises `message` with the position ("script.lua:12: ") of the innermost
// Lua code on the call stack in front. Never returns.
[[noreturn]] void raise_message(lua_State* L, const char* message);

// A bound function that may throw a C++ exception (std::bad_alloc, ...):
// guarded<fn> turns it into a Lua error carrying the exception's message,
// after the function's C++ objects were destroyed. Lua's own errors pass.
template <lua_CFunction F>
int guarded(lua_State* L) {
  try {
    return F(L);
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());
  }
  raise_message(L, lua_tostring(L, -1));
}

// Handles as full userdata with a metatable per kind ("kiln.Tensor",
// "kiln.Module", "kiln.Optimizer", "kiln.Schedule", "kiln.Source",
// "kiln.Transform", "kiln.Loader", ...). The userdata owns one reference
// and releases it in __gc (and __close).
//
// push_handle takes over the caller's reference on `handle`; check_handle
// raises a Lua type error naming the expected kind when the value at
// `index` is not one (or was already released).
void push_handle(lua_State* L, void* handle, const char* kind);
void* check_handle(lua_State* L, int index, const char* kind);
void* test_handle(lua_State* L, int index, const char* kind);  // nullptr when not one
// Registers the metatable of a kind: `release` drops a reference; `methods`
// become the __index table (luaL_Reg array ending with {nullptr, nullptr}).
void define_kind(lua_State* L, const char* kind, void (*release)(void*), const luaL_Reg* methods);

// Tensors.
constexpr const char* kTensor = "kiln.Tensor";
void push_tensor(lua_State* L, kiln_tensor* t);  // takes over the reference
kiln_tensor* check_tensor(lua_State* L, int index);
// A tensor from a tensor, a number (a scalar like `like`: same dtype and
// device) or a nested table of numbers; *owned is set when a new reference
// was made that the caller must release.
kiln_tensor* to_tensor(lua_State* L, int index, kiln_tensor* like, bool* owned);

// Pushes a table name -> tensor of `count` entries, entry i given by
// get(i, &name, &tensor) (a kiln_status; a new reference on the tensor).
template <class Get>
void push_named_tensors(lua_State* L, size_t count, Get get) {
  lua_createtable(L, 0, int(count));
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    kiln_tensor* t = nullptr;
    check(L, get(i, &name, &t));
    lua_pushstring(L, name);
    push_tensor(L, t);
    lua_settable(L, -3);
  }
}

// Calls an op by name (looked up once per state and cached) and pushes its
// outputs; returns how many it pushed.
int call_op(lua_State* L, const char* op, kiln_tensor* const* inputs, size_t n_inputs, const kiln_attr* attrs,
            size_t n_attrs);

// Whether the runtime has an op of that name (plugins' ops included).
bool has_op(lua_State* L, const char* name);
// Pushes the function that calls the op named by the string at `name_index`
// as kiln.F.<name> does (inputs, then an optional table of attributes); the
// op is looked up when called.
void push_op_function(lua_State* L, int name_index);

// Attributes from a Lua table of options ({kernel_size = 5, padding = 2,
// bias = false, betas = {0.9, 0.999}, dtype = "f32", input = <tensor>}):
// every string key becomes one kiln_attr (integers, floats, booleans, lists
// of integers or floats, strings, tensors; a dtype is given as a string and
// is converted for keys the caller names in `dtype_keys`). Keys in `skip`
// are left out. Storage lives as long as the object.
class AttrList {
 public:
  AttrList(lua_State* L, int table_index, std::vector<std::string> skip = {},
           std::vector<std::string> dtype_keys = {});
  const kiln_attr* data() const { return attrs_.empty() ? nullptr : attrs_.data(); }
  size_t size() const { return attrs_.size(); }

 private:
  std::vector<kiln_attr> attrs_;
  // Deques: kiln_attr points into them, and a deque never moves what it holds.
  std::deque<std::string> strings_;
  std::deque<std::vector<int64_t>> ints_;
  std::deque<std::vector<double>> floats_;
};

// dtype and device names as scripts write them: "f32", "float32", "i64",
// ...; "cpu", "cuda", "cuda:1".
kiln_dtype check_dtype(lua_State* L, int index);
void check_device(lua_State* L, int index, kiln_device_type* type, int* device_index);
const char* dtype_name(kiln_dtype dtype);

// Each part of the module adds its functions to the table on top of the
// stack (the `kiln` table) — open_tensor adds kiln.tensor, kiln.zeros, ...;
// open_nn adds kiln.nn; and so on.
void open_tensor(lua_State* L);
void open_functional(lua_State* L);  // kiln.F / kiln.nn.functional: ops, losses
void open_op_listing(lua_State* L);  // kiln.ops: what each op takes
void open_nn(lua_State* L);          // kiln.nn: layers, Sequential, Graph
void open_optim(lua_State* L);       // kiln.optim: optimizers, schedules
void open_data(lua_State* L);        // kiln.data: sources, transforms, loaders
void open_train(lua_State* L);       // kiln.fit, kiln.evaluate
void open_checkpoint(lua_State* L);  // kiln.save, kiln.load
void open_dist(lua_State* L);        // kiln.dist: process groups and collectives
void open_profile(lua_State* L);     // kiln.profile, kiln.write_trace
void open_memory(lua_State* L);      // kiln.memory, kiln.find_batch_size

}  // namespace kiln::lua
