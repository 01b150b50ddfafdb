// kiln.memory and kiln.find_batch_size: the allocators' statistics, a cap
// on the CPU's, what training a model at a batch size holds, and the
// largest batch that fits (kiln_memory_estimate_get, kiln_find_batch_size).
//
//   kiln.memory.stats("cpu")          -- {current_bytes =, peak_bytes =, reserved_bytes =, limit_bytes =, ...}
//   kiln.memory.reset_peak("cpu")     -- peak_bytes starts again from current_bytes
//   kiln.memory.empty_cache("cpu")    -- give the cached free blocks back to the system (or the GPU)
//   kiln.memory.set_limit(1 << 30)    -- cap the CPU allocator (0: none); over it, out-of-memory errors
//                                     --   (refused in a sandbox: the runtime is the host's)
//   kiln.memory.estimate(model, {1, 28, 28}, {batch_size = 64, optimizer = opt, precision = "bf16",
//                                             loss = "cross_entropy"})
//     -- {parameters =, buffers =, gradients =, optimizer =, activations =, total =}, in bytes
//   local n, info = kiln.find_batch_size{model = m, input_shape = {1, 28, 28}, optimizer = opt,
//                                        loss = "cross_entropy", limit_bytes = 1 << 30,
//                                        max_batch_size = 4096, precision = "f32"}
//     -- n: the largest batch that fits; info: {peak_bytes =, tries =}
//
// input_shape is one example's, without the batch dimension; loss is an op
// name (default "cross_entropy"). See kiln_training.h for what a trial runs.
#include <string>
#include <vector>

#include "nn_module.hpp"
#include "nn_shared.hpp"
#include "optim.hpp"
#include "sandbox.hpp"

namespace kiln::lua {
namespace {

void set_integer(lua_State* L, const char* field, int64_t value) {
  lua_pushinteger(L, value);
  lua_setfield(L, -2, field);
}

// The device named at `index`, "cpu" when absent.
void opt_device(lua_State* L, int index, kiln_device_type* type, int* device_index) {
  *type = KILN_DEVICE_CPU;
  *device_index = 0;
  if (!lua_isnoneornil(L, index)) check_device(L, index, type, device_index);
}

int stats(lua_State* L) {
  kiln_device_type type;
  int index;
  opt_device(L, 1, &type, &index);
  kiln_memory_stats s{};
  s.size = sizeof s;
  check(L, kiln_memory_stats_get(runtime(L), type, index, &s));
  lua_createtable(L, 0, 8);
  set_integer(L, "current_bytes", s.current_bytes);
  set_integer(L, "peak_bytes", s.peak_bytes);
  set_integer(L, "reserved_bytes", s.reserved_bytes);
  set_integer(L, "num_allocs", s.num_allocs);
  set_integer(L, "num_frees", s.num_frees);
  set_integer(L, "cached_free_bytes", s.cached_free_bytes);
  set_integer(L, "limit_bytes", s.limit_bytes);
  return 1;
}

// kiln.memory.reset_peak and empty_cache: Call on the device named by
// argument 1 (the CPU by default).
template <kiln_status (*Call)(kiln_runtime*, kiln_device_type, int)>
int on_device(lua_State* L) {
  kiln_device_type type;
  int index;
  opt_device(L, 1, &type, &index);
  check(L, Call(runtime(L), type, index));
  return 0;
}

// The cap holds for the whole runtime, which a sandboxed script shares with its host.
int set_limit(lua_State* L) {
  if (sandboxed(L)) luaL_error(L, "kiln.memory.set_limit: a sandboxed script cannot cap its host's memory");
  const lua_Integer bytes = luaL_checkinteger(L, 1);
  check(L, kiln_memory_set_limit(runtime(L), KILN_DEVICE_CPU, 0, bytes));
  return 0;
}

std::vector<int64_t> check_shape(lua_State* L, int index, const char* what) {
  if (!lua_istable(L, index)) luaL_error(L, "%s: expected an array of dimension sizes, got a %s", what,
                                         luaL_typename(L, index));
  std::vector<int64_t> dims;
  for (lua_Integer i = 1; i <= luaL_len(L, index); ++i) {
    lua_geti(L, index, i);
    if (!lua_isinteger(L, -1)) luaL_error(L, "%s: entry %d is not an integer", what, int(i));
    dims.push_back(lua_tointeger(L, -1));
    lua_pop(L, 1);
  }
  return dims;
}

// The options both calls share, read from the table at `index` (nil:
// defaults); `loss` and `precision` keep the strings alive.
kiln_memory_plan_options plan_options(lua_State* L, int index, std::string* loss, std::string* precision) {
  kiln_memory_plan_options o{};
  o.size = sizeof o;
  if (lua_isnoneornil(L, index)) return o;
  *loss = opt_string_field(L, index, "loss");
  *precision = opt_string_field(L, index, "precision");
  if (!loss->empty()) o.loss = loss->c_str();
  if (!precision->empty()) o.precision = precision->c_str();
  if (lua_getfield(L, index, "optimizer") != LUA_TNIL) o.optimizer = check_optimizer(L, -1);
  lua_pop(L, 1);
  o.limit_bytes = opt_integer_field(L, index, "limit_bytes", 0);
  o.max_batch_size = opt_integer_field(L, index, "max_batch_size", 0);
  return o;
}

// kiln.memory.estimate(model, input_shape, {batch_size =, optimizer =, precision =, loss =})
int estimate(lua_State* L) {
  kiln_module* model = check_module(L, 1);
  const std::vector<int64_t> shape = check_shape(L, 2, "kiln.memory.estimate: input_shape");
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  check_known_fields(L, 3, "kiln.memory.estimate", {"batch_size", "optimizer", "precision", "loss"});
  std::string loss, precision;
  const kiln_memory_plan_options o = plan_options(L, 3, &loss, &precision);
  const lua_Integer batch_size = lua_isnoneornil(L, 3) ? 1 : opt_integer_field(L, 3, "batch_size", 1);
  kiln_memory_estimate e{};
  e.size = sizeof e;
  check(L, kiln_memory_estimate_get(model, shape.data(), int(shape.size()), batch_size, &o, &e));
  lua_createtable(L, 0, 6);
  set_integer(L, "parameters", e.parameter_bytes);
  set_integer(L, "buffers", e.buffer_bytes);
  set_integer(L, "gradients", e.gradient_bytes);
  set_integer(L, "optimizer", e.optimizer_bytes);
  set_integer(L, "activations", e.activation_bytes);
  set_integer(L, "total", e.total_bytes);
  return 1;
}

// kiln.find_batch_size{model =, input_shape =, loss =, optimizer =, limit_bytes =, max_batch_size =, precision =}
int find_batch_size(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  check_known_fields(L, 1, "kiln.find_batch_size",
                     {"model", "input_shape", "loss", "optimizer", "limit_bytes", "max_batch_size", "precision"});
  lua_getfield(L, 1, "model");
  kiln_module* model = check_module(L, -1);
  lua_getfield(L, 1, "input_shape");
  const std::vector<int64_t> shape = check_shape(L, -1, "kiln.find_batch_size: input_shape");
  std::string loss, precision;
  const kiln_memory_plan_options o = plan_options(L, 1, &loss, &precision);
  kiln_batch_size_result r{};
  r.size = sizeof r;
  check(L, kiln_find_batch_size(model, shape.data(), int(shape.size()), &o, &r));
  lua_pushinteger(L, r.batch_size);
  lua_createtable(L, 0, 2);
  set_integer(L, "peak_bytes", r.peak_bytes);
  set_integer(L, "tries", r.tries);
  return 2;
}

constexpr luaL_Reg kMemoryFunctions[] = {
    {"stats", guarded<stats>},
    {"reset_peak", guarded<on_device<kiln_memory_reset_peak>>},
    {"empty_cache", guarded<on_device<kiln_memory_empty_cache>>},
    {"set_limit", guarded<set_limit>},
    {"estimate", guarded<estimate>},
    {nullptr, nullptr},
};

}  // namespace

void open_memory(lua_State* L) {
  lua_pushcfunction(L, guarded<find_batch_size>);
  lua_setfield(L, -2, "find_batch_size");
  push_subtable(L, -1, "memory");
  luaL_setfuncs(L, kMemoryFunctions, 0);
  lua_pop(L, 1);
}

}  // namespace kiln::lua
