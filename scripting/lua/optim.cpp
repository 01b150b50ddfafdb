// kiln.optim: optimizers and learning-rate schedules.
//
//   local opt = kiln.optim.SGD(model:parameters(), {lr = 0.1, momentum = 0.9})   -- any registered type
//   local opt = kiln.optim.Adam({{params = body:parameters(), lr = 1e-3},        -- parameter groups:
//                                {params = head:parameters(), weight_decay = 0}},--   a group's own values,
//                               {lr = 1e-4, weight_decay = 1e-2})                --   else these
//   opt:step()   opt:zero_grad()   opt:steps()          -- steps taken
//   opt:get("momentum", 2)   opt:set("lr", 0.01, 1)     -- hyper-parameters; group 1 (1-based) by default
//   opt:lr()                                            -- the first group's learning rate
//   local s = opt:state()   opt:load_state(s)           -- state: table name -> tensor ("step", "0.exp_avg")
//
//   local s = kiln.optim.schedule("cosine", {t_max = 1000})   -- any registered schedule
//   local s = kiln.optim.lr_scheduler.cosine{t_max = 1000}    -- the same, by name
//   s:lr(step, base_lr)                                       -- step 0 is the first
//
// An unknown optimizer or schedule name under kiln.optim / lr_scheduler is nil.
#include "optim.hpp"

#include <memory>
#include <string>
#include <vector>

#include "nn_shared.hpp"

namespace kiln::lua {
namespace {

// A parameter group is a table with `params`; a plain array of tensors is
// the parameters of a single group.
bool is_group_list(lua_State* L, int params) {
  const bool groups = lua_geti(L, params, 1) == LUA_TTABLE && !test_handle(L, -1, kTensor);
  lua_pop(L, 1);
  return groups;
}

// Pushes a table with the entries of `options` (may be nil) overridden by
// the string-keyed entries of `group` (may be 0: none).
int push_merged(lua_State* L, int options, int group) {
  lua_newtable(L);
  const int merged = lua_gettop(L);
  for (int source : {options, group}) {
    if (source == 0 || lua_isnoneornil(L, source)) continue;
    lua_pushnil(L);
    while (lua_next(L, source)) {
      if (lua_type(L, -2) == LUA_TSTRING) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_settable(L, merged);
      } else {
        lua_pop(L, 1);
      }
    }
  }
  return merged;
}

// Creates the optimizer from group 1, then adds the others; pushes it.
void push_with_groups(lua_State* L, const char* type, int groups, int options) {
  // Owned here until every group is in (a Lua error unwinds through it).
  std::unique_ptr<kiln_optimizer, decltype(&kiln_optimizer_release)> opt(nullptr, kiln_optimizer_release);
  const lua_Integer n = luaL_len(L, groups);
  for (lua_Integer g = 1; g <= n; ++g) {
    const int top = lua_gettop(L);
    if (lua_geti(L, groups, g) != LUA_TTABLE) luaL_error(L, "kiln.optim.%s: group %d is not a table", type, int(g));
    const int group = lua_gettop(L);
    lua_getfield(L, group, "params");
    const std::string what = "kiln.optim." + std::string(type) + ": params of group " + std::to_string(g);
    const std::vector<kiln_tensor*> params = check_tensor_array(L, -1, what.c_str());
    const AttrList attrs(L, push_merged(L, options, group), {"params"});
    if (g == 1) {
      kiln_optimizer* created = nullptr;
      check(L, kiln_optimizer_create(runtime(L), type, params.data(), params.size(), attrs.data(), attrs.size(),
                                     &created));
      opt.reset(created);
    } else {
      check(L, kiln_optimizer_add_group(opt.get(), params.data(), params.size(), attrs.data(), attrs.size()));
    }
    lua_settop(L, top);
  }
  if (!opt) luaL_error(L, "kiln.optim.%s: no parameter group given", type);
  push_handle(L, opt.release(), kOptimizer);
}

// kiln.optim.<Type>(params, options): the type is upvalue 1.
int make_optimizer(lua_State* L) {
  const char* type = lua_tostring(L, lua_upvalueindex(1));
  luaL_checktype(L, 1, LUA_TTABLE);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  if (is_group_list(L, 1)) {
    push_with_groups(L, type, 1, 2);
    return 1;
  }
  const std::string what = "kiln.optim." + std::string(type) + ": params";
  const std::vector<kiln_tensor*> params = check_tensor_array(L, 1, what.c_str());
  const AttrList attrs(L, 2);
  kiln_optimizer* opt = nullptr;
  check(L, kiln_optimizer_create(runtime(L), type, params.data(), params.size(), attrs.data(), attrs.size(), &opt));
  push_handle(L, opt, kOptimizer);
  return 1;
}

// The group argument at `index`: 1-based in Lua (default 1), 0-based in C.
// Checked here, so that the message counts as the script does.
size_t check_group(lua_State* L, kiln_optimizer* opt, int index) {
  const lua_Integer group = luaL_optinteger(L, index, 1);
  size_t groups = 0;
  check(L, kiln_optimizer_group_count(opt, &groups));
  if (group < 1 || group > lua_Integer(groups))
    luaL_error(L, "group %I does not exist: the optimizer has %d group(s), numbered from 1", group, int(groups));
  return size_t(group - 1);
}

int optimizer_step(lua_State* L) {
  check(L, kiln_optimizer_step(check_optimizer(L, 1)));
  return 0;
}

int optimizer_zero_grad(lua_State* L) {
  check(L, kiln_optimizer_zero_grad(check_optimizer(L, 1)));
  return 0;
}

int optimizer_get(lua_State* L) {
  kiln_optimizer* opt = check_optimizer(L, 1);
  double value = 0;
  check(L, kiln_optimizer_get_hyper(opt, check_group(L, opt, 3), luaL_checkstring(L, 2), &value));
  lua_pushnumber(L, value);
  return 1;
}

int optimizer_set(lua_State* L) {
  kiln_optimizer* opt = check_optimizer(L, 1);
  check(L, kiln_optimizer_set_hyper(opt, check_group(L, opt, 4), luaL_checkstring(L, 2), luaL_checknumber(L, 3)));
  return 0;
}

int optimizer_lr(lua_State* L) {
  double lr = 0;
  check(L, kiln_optimizer_get_hyper(check_optimizer(L, 1), 0, "lr", &lr));
  lua_pushnumber(L, lr);
  return 1;
}

int optimizer_steps(lua_State* L) {
  int64_t steps = 0;
  check(L, kiln_optimizer_step_count(check_optimizer(L, 1), &steps));
  lua_pushinteger(L, steps);
  return 1;
}

int optimizer_groups(lua_State* L) {
  size_t groups = 0;
  check(L, kiln_optimizer_group_count(check_optimizer(L, 1), &groups));
  lua_pushinteger(L, lua_Integer(groups));
  return 1;
}

int optimizer_state(lua_State* L) {
  kiln_optimizer* opt = check_optimizer(L, 1);
  size_t n = 0;
  check(L, kiln_optimizer_state_count(opt, &n));
  push_named_tensors(L, n, [&](size_t i, const char** name, kiln_tensor** t) {
    return kiln_optimizer_state_get(opt, i, name, t);
  });
  return 1;
}

int optimizer_load_state(lua_State* L) {
  kiln_optimizer* opt = check_optimizer(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  std::vector<std::string> names;
  std::vector<kiln_tensor*> tensors;
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "load_state: keys must be state names (\"step\", \"0.exp_avg\"), got a %s", luaL_typename(L, -2));
    names.emplace_back(lua_tostring(L, -2));
    tensors.push_back(check_tensor(L, -1));
    lua_pop(L, 1);
  }
  std::vector<const char*> pointers;
  for (const std::string& name : names) pointers.push_back(name.c_str());
  check(L, kiln_optimizer_state_load(opt, pointers.data(), tensors.data(), tensors.size()));
  return 0;
}

constexpr luaL_Reg kOptimizerMethods[] = {
    {"step", guarded<optimizer_step>},   {"zero_grad", guarded<optimizer_zero_grad>},
    {"get", guarded<optimizer_get>},     {"set", guarded<optimizer_set>},
    {"lr", guarded<optimizer_lr>},       {"steps", guarded<optimizer_steps>},
    {"groups", guarded<optimizer_groups>}, {"state", guarded<optimizer_state>},
    {"load_state", guarded<optimizer_load_state>}, {nullptr, nullptr},
};

kiln_lr_schedule* create_schedule(lua_State* L, const char* type, int config) {
  if (!lua_isnoneornil(L, config)) luaL_checktype(L, config, LUA_TTABLE);
  const AttrList attrs(L, config);
  kiln_lr_schedule* s = nullptr;
  check(L, kiln_lr_schedule_create(runtime(L), type, attrs.data(), attrs.size(), &s));
  return s;
}

// kiln.optim.schedule(type, config)
int make_schedule(lua_State* L) {
  push_handle(L, create_schedule(L, luaL_checkstring(L, 1), 2), kSchedule);
  return 1;
}

// kiln.optim.lr_scheduler.<type>(config): the type is upvalue 1.
int make_named_schedule(lua_State* L) {
  push_handle(L, create_schedule(L, lua_tostring(L, lua_upvalueindex(1)), 1), kSchedule);
  return 1;
}

int schedule_lr(lua_State* L) {
  kiln_lr_schedule* s = check_schedule(L, 1);
  double lr = 0;
  check(L, kiln_lr_schedule_lr(s, luaL_checkinteger(L, 2), luaL_checknumber(L, 3), &lr));
  lua_pushnumber(L, lr);
  return 1;
}

constexpr luaL_Reg kScheduleMethods[] = {
    {"lr", guarded<schedule_lr>},
    {nullptr, nullptr},
};

}  // namespace

void open_optim(lua_State* L) {
  define_kind(L, kOptimizer, [](void* h) { kiln_optimizer_release(static_cast<kiln_optimizer*>(h)); },
              kOptimizerMethods);
  define_kind(L, kSchedule, [](void* h) { kiln_lr_schedule_release(static_cast<kiln_lr_schedule*>(h)); },
              kScheduleMethods);
  push_subtable(L, -1, "optim");
  lua_pushcfunction(L, guarded<make_schedule>);
  lua_setfield(L, -2, "schedule");
  push_subtable(L, -1, "lr_scheduler");
  set_registered_constructors(L, KILN_REG_LR_SCHEDULE, guarded<make_named_schedule>);
  lua_pop(L, 1);
  set_registered_constructors(L, KILN_REG_OPTIMIZER, guarded<make_optimizer>);
  lua_pop(L, 1);
}

}  // namespace kiln::lua
