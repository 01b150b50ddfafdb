// Methods of a kiln.Module (a layer, a Sequential, a Graph or an op):
//
//   local y = m(x)                      -- __call is forward; several outputs give several values
//   local y1, y2 = m:forward(x1, x2)
//   m:parameters()                      -- array of tensors, in the module's fixed order
//   m:named_parameters()                -- array of {name, tensor} pairs in the same order:
//                                       --   for _, p in ipairs(m:named_parameters()) do print(p[1], p[2]) end
//   m:buffers(), m:named_buffers()      -- the same for buffers (BatchNorm's running statistics)
//   m:train(), m:train(false), m:eval() -- set the mode of the module and all it holds; return m
//   m:training()                        -- true in train mode
//   m:to("cuda:0"), m:cast("f64"), m:double(), m:float()   -- move or cast in place; return m
//   m:build{1, 1, 28, 28}               -- output shapes for inputs of these shapes (f32), one
//   m:build({{1, 4}, {1, 4}}, "f64")    --   table per output; a layer that does not fit raises
//                                       --   the runtime's message, which names it
//   m:type()                            -- "Linear", "Sequential", "Graph", "op:add"
//   seq:add(m), seq:add("name", m)      -- append to a Sequential; return seq
//   tostring(m)                         -- "kiln.Module<Linear>: 2 parameters, 7850 values"
#include "nn_module.hpp"

#include <string>
#include <vector>

#include "nn_shared.hpp"
#include "tensor_ref.hpp"

namespace kiln::lua {
namespace {

int module_forward(lua_State* L) {
  kiln_module* m = check_module(L, 1);
  std::vector<kiln_tensor*> inputs;
  for (int i = 2; i <= lua_gettop(L); ++i) inputs.push_back(check_tensor(L, i));
  kiln_tensor* outputs[kMaxOutputs] = {};
  size_t n = 0;
  check(L, kiln_module_forward(m, inputs.data(), inputs.size(), outputs, kMaxOutputs, &n));
  for (size_t i = 0; i < n; ++i) push_tensor(L, outputs[i]);
  return int(n);
}

// The tensors of a module as an array; `named` pairs each with its name.
using TensorCount = kiln_status (*)(const kiln_module*, size_t*);
using TensorAt = kiln_status (*)(const kiln_module*, size_t, const char**, kiln_tensor**);

int push_tensors(lua_State* L, TensorCount count, TensorAt at, bool named) {
  kiln_module* m = check_module(L, 1);
  size_t n = 0;
  check(L, count(m, &n));
  lua_createtable(L, int(n), 0);
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    kiln_tensor* t = nullptr;
    check(L, at(m, i, &name, &t));
    if (named) {
      lua_createtable(L, 2, 0);
      lua_pushstring(L, name);
      lua_rawseti(L, -2, 1);
      push_tensor(L, t);
      lua_rawseti(L, -2, 2);
    } else {
      push_tensor(L, t);
    }
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  return 1;
}

int module_parameters(lua_State* L) {
  return push_tensors(L, kiln_module_parameter_count, kiln_module_parameter, false);
}
int module_named_parameters(lua_State* L) {
  return push_tensors(L, kiln_module_parameter_count, kiln_module_parameter, true);
}
int module_buffers(lua_State* L) { return push_tensors(L, kiln_module_buffer_count, kiln_module_buffer, false); }
int module_named_buffers(lua_State* L) {
  return push_tensors(L, kiln_module_buffer_count, kiln_module_buffer, true);
}

int module_train(lua_State* L) {
  kiln_module* m = check_module(L, 1);
  const bool training = lua_isnoneornil(L, 2) || lua_toboolean(L, 2);
  check(L, kiln_module_set_training(m, training));
  lua_settop(L, 1);
  return 1;
}

int module_eval(lua_State* L) {
  check(L, kiln_module_set_training(check_module(L, 1), 0));
  lua_settop(L, 1);
  return 1;
}

int module_training(lua_State* L) {
  int training = 0;
  check(L, kiln_module_training(check_module(L, 1), &training));
  lua_pushboolean(L, training);
  return 1;
}

int module_to(lua_State* L) {
  kiln_module* m = check_module(L, 1);
  kiln_device_type device{};
  int index = 0;
  check_device(L, 2, &device, &index);
  check(L, kiln_module_to(m, device, index));
  lua_settop(L, 1);
  return 1;
}

int cast_to(lua_State* L, kiln_dtype dtype) {
  check(L, kiln_module_cast(check_module(L, 1), dtype));
  lua_settop(L, 1);
  return 1;
}
int module_cast(lua_State* L) { return cast_to(L, check_dtype(L, 2)); }
int module_double(lua_State* L) { return cast_to(L, KILN_F64); }
int module_float(lua_State* L) { return cast_to(L, KILN_F32); }

kiln_tensor_desc check_shape(lua_State* L, int index, kiln_dtype dtype) {
  kiln_tensor_desc desc{};
  desc.dtype = dtype;
  const lua_Integer rank = luaL_len(L, index);
  if (rank > KILN_MAX_DIMS) luaL_error(L, "build: a shape has %d dimensions; at most %d", int(rank), KILN_MAX_DIMS);
  desc.rank = int(rank);
  for (lua_Integer d = 1; d <= rank; ++d) {
    lua_geti(L, index, d);
    int is_integer = 0;
    desc.dims[d - 1] = lua_tointegerx(L, -1, &is_integer);
    if (!is_integer) luaL_error(L, "build: dimension %d of a shape is a %s; expected an integer", int(d),
                                luaL_typename(L, -1));
    lua_pop(L, 1);
  }
  return desc;
}

// m:build(shape, ...) or m:build({shape, ...}); a trailing string is the dtype.
int module_build(lua_State* L) {
  kiln_module* m = check_module(L, 1);
  int last = lua_gettop(L);
  kiln_dtype dtype = KILN_F32;
  if (last > 1 && lua_type(L, last) == LUA_TSTRING) dtype = check_dtype(L, last--);
  std::vector<kiln_tensor_desc> inputs;
  for (int i = 2; i <= last; ++i) {
    luaL_checktype(L, i, LUA_TTABLE);
    const bool list_of_shapes = lua_geti(L, i, 1) == LUA_TTABLE;
    lua_pop(L, 1);
    if (!list_of_shapes) {
      inputs.push_back(check_shape(L, i, dtype));
      continue;
    }
    for (lua_Integer k = 1; k <= luaL_len(L, i); ++k) {
      lua_geti(L, i, k);
      inputs.push_back(check_shape(L, lua_gettop(L), dtype));
      lua_pop(L, 1);
    }
  }
  kiln_tensor_desc outputs[kMaxOutputs] = {};
  size_t n = 0;
  check(L, kiln_module_build(m, inputs.data(), inputs.size(), outputs, kMaxOutputs, &n));
  for (size_t o = 0; o < n; ++o) {
    lua_createtable(L, outputs[o].rank, 0);
    for (int d = 0; d < outputs[o].rank; ++d) {
      lua_pushinteger(L, outputs[o].dims[d]);
      lua_rawseti(L, -2, d + 1);
    }
  }
  return int(n);
}

const char* module_type_name(lua_State* L, kiln_module* m) {
  const char* type = nullptr;
  check(L, kiln_module_type(m, &type));
  return type;
}

int module_type(lua_State* L) {
  lua_pushstring(L, module_type_name(L, check_module(L, 1)));
  return 1;
}

int module_add(lua_State* L) {
  kiln_module* seq = check_module(L, 1);
  const bool named = lua_type(L, 2) == LUA_TSTRING;
  const char* name = named ? lua_tostring(L, 2) : nullptr;
  check(L, kiln_sequential_append(seq, name, check_module(L, named ? 3 : 2)));
  lua_settop(L, 1);
  return 1;
}

int module_tostring(lua_State* L) {
  kiln_module* m = check_module(L, 1);
  size_t n = 0;
  int64_t values = 0;
  check(L, kiln_module_parameter_count(m, &n));
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    kiln_tensor* t = nullptr;
    check(L, kiln_module_parameter(m, i, &name, &t));
    const TensorRef param(t);
    int64_t numel = 0;
    check(L, kiln_tensor_numel(param.get(), &numel));
    values += numel;
  }
  lua_pushfstring(L, "%s<%s>: %d parameters, %I values", kModule, module_type_name(L, m), int(n),
                  lua_Integer(values));
  return 1;
}

constexpr luaL_Reg kMethods[] = {
    {"forward", guarded<module_forward>},
    {"parameters", guarded<module_parameters>},
    {"named_parameters", guarded<module_named_parameters>},
    {"buffers", guarded<module_buffers>},
    {"named_buffers", guarded<module_named_buffers>},
    {"train", guarded<module_train>},
    {"eval", guarded<module_eval>},
    {"training", guarded<module_training>},
    {"to", guarded<module_to>},
    {"cast", guarded<module_cast>},
    {"double", guarded<module_double>},
    {"float", guarded<module_float>},
    {"build", guarded<module_build>},
    {"type", guarded<module_type>},
    {"add", guarded<module_add>},
    {nullptr, nullptr},
};

}  // namespace

void define_module_kind(lua_State* L) {
  define_kind(L, kModule, [](void* m) { kiln_module_release(static_cast<kiln_module*>(m)); }, kMethods);
  constexpr luaL_Reg kMetamethods[] = {
      {"__call", guarded<module_forward>},
      {"__tostring", guarded<module_tostring>},
      {nullptr, nullptr},
  };
  set_metamethods(L, kModule, kMetamethods);
}

}  // namespace kiln::lua
