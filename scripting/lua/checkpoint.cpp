// kiln.save and kiln.load: safetensors files of a model's weights or of any
// named tensors (see kiln_weights_save and kiln_safetensors_save).
//
//   kiln.save("mlp.safetensors", model)          -- parameters and buffers, under PyTorch's state_dict names
//   kiln.save("stats.safetensors", {mean = m, std = s})
//   local t = kiln.load("stats.safetensors")     -- {mean = <tensor>, std = <tensor>} (CPU tensors)
//   kiln.load("mlp.safetensors", model)          -- into the model, every name matching;
//   kiln.load("mlp.safetensors", model, {strict = false})  -- names only one side has are skipped
//
// The training state (model, optimizer, schedule position, random stream,
// data position) is saved by kiln.fit's checkpoint options and loaded by
// its `resume` option.
#include "data.hpp"
#include "nn_module.hpp"
#include "nn_shared.hpp"
#include "sandbox.hpp"

namespace kiln::lua {
namespace {

int save(lua_State* L) {
  refuse_files_in_sandbox(L, "kiln.save");
  const char* path = luaL_checkstring(L, 1);
  if (auto* model = static_cast<kiln_module*>(test_handle(L, 2, kModule))) {
    check(L, kiln_weights_save(model, path));
    return 0;
  }
  if (!lua_istable(L, 2))
    luaL_error(L, "kiln.save: expected a module or a table of name -> tensor to save, got a %s",
               luaL_typename(L, 2));
  const ExampleRef tensors = check_example(L, 2);
  check(L, kiln_safetensors_save(tensors.get(), path));
  return 0;
}

int load(lua_State* L) {
  refuse_files_in_sandbox(L, "kiln.load");
  const char* path = luaL_checkstring(L, 1);
  if (lua_isnoneornil(L, 2)) {
    kiln_example* raw = nullptr;
    check(L, kiln_safetensors_load(runtime(L), path, &raw));
    const ExampleRef tensors(raw, kiln_example_release);
    push_example(L, tensors.get());
    return 1;
  }
  kiln_module* model = check_module(L, 2);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  check_known_fields(L, 3, "kiln.load", {"strict"});
  const bool strict = lua_isnoneornil(L, 3) || opt_boolean_field(L, 3, "strict", true);
  check(L, kiln_weights_load(model, path, strict ? 1 : 0));
  lua_settop(L, 2);
  return 1;
}

constexpr luaL_Reg kFunctions[] = {
    {"save", guarded<save>},
    {"load", guarded<load>},
    {nullptr, nullptr},
};

}  // namespace

void open_checkpoint(lua_State* L) { luaL_setfuncs(L, kFunctions, 0); }

}  // namespace kiln::lua
