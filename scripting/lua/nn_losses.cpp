// Losses as callables, each over one op of the runtime:
//
//   local criterion = kiln.nn.CrossEntropyLoss{label_smoothing = 0.1}   -- cross_entropy
//   local loss = criterion(output, target)                               -- a scalar tensor
//   kiln.nn.MSELoss()            -- mse_loss          kiln.nn.NLLLoss()   -- nll_loss
//   kiln.nn.BCEWithLogitsLoss()  -- bce_with_logits
//
// Options are the op's attributes (reduction = "mean" | "sum" | "none",
// ignore_index, label_smoothing). A loss is a table {op = ..., options = ...}
// whose metatable is "kiln.Loss".
#include "nn_losses.hpp"

#include <string>

namespace kiln::lua {
namespace {

constexpr const char* kLoss = "kiln.Loss";

struct LossType {
  const char* name;
  const char* op;
};

constexpr LossType kLossTypes[] = {
    {"CrossEntropyLoss", "cross_entropy"},
    {"MSELoss", "mse_loss"},
    {"NLLLoss", "nll_loss"},
    {"BCEWithLogitsLoss", "bce_with_logits"},
};

bool is_loss(lua_State* L, int index) {
  if (!lua_getmetatable(L, index)) return false;
  luaL_getmetatable(L, kLoss);
  const bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

// loss(output, target)
int loss_call(lua_State* L) {
  lua_getfield(L, 1, "op");
  const std::string op = lua_tostring(L, -1);
  lua_getfield(L, 1, "options");
  const int options = lua_gettop(L);
  kiln_tensor* inputs[2] = {check_tensor(L, 2), check_tensor(L, 3)};
  const AttrList attrs(L, options);
  return call_op(L, op.c_str(), inputs, 2, attrs.data(), attrs.size());
}

int loss_tostring(lua_State* L) {
  lua_getfield(L, 1, "op");
  lua_pushfstring(L, "%s<%s>", kLoss, lua_tostring(L, -1));
  return 1;
}

// kiln.nn.<Loss>(options): the op name is upvalue 1.
int make_loss(lua_State* L) {
  if (lua_isnoneornil(L, 1)) {
    lua_settop(L, 0);
    lua_newtable(L);
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setfield(L, -2, "op");
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "options");
  luaL_setmetatable(L, kLoss);
  return 1;
}

}  // namespace

void add_losses(lua_State* L, int nn_index) {
  nn_index = lua_absindex(L, nn_index);
  if (luaL_newmetatable(L, kLoss)) {
    lua_pushcfunction(L, guarded<loss_call>);
    lua_setfield(L, -2, "__call");
    lua_pushcfunction(L, loss_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  for (const LossType& type : kLossTypes) {
    lua_pushstring(L, type.op);
    lua_pushcclosure(L, guarded<make_loss>, 1);
    lua_setfield(L, nn_index, type.name);
  }
}

std::string check_trainer_loss(lua_State* L, int index) {
  if (lua_type(L, index) == LUA_TSTRING) return lua_tostring(L, index);
  if (!is_loss(L, index))
    luaL_error(L, "loss: expected an op name (\"cross_entropy\") or a kiln.nn loss, got a %s",
               luaL_typename(L, index));
  lua_getfield(L, index, "options");
  lua_pushnil(L);
  const bool has_options = lua_next(L, -2) != 0;
  lua_pop(L, has_options ? 3 : 1);
  lua_getfield(L, index, "op");
  std::string op = lua_tostring(L, -1);
  lua_pop(L, 1);
  if (has_options)
    luaL_error(L, "loss: the trainer takes a loss by op name only; %s with options cannot be passed to it",
               op.c_str());
  return op;
}

}  // namespace kiln::lua
