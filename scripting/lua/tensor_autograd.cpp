// Gradients and copies: t:backward(grad?, retain_graph?), t.grad,
// t:requires_grad(flag?), t:detach(), t:zero_grad(), t:clone(), t:copy_(src).
#include "tensor_methods.hpp"
#include "tensor_util.hpp"

namespace kiln::lua {
namespace {

int tensor_backward(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  kiln_tensor* grad = lua_isnoneornil(L, 2) ? nullptr : check_tensor(L, 2);
  check(L, kiln_backward(runtime(L), t, grad, lua_toboolean(L, 3)));
  return 0;
}

// t:requires_grad() tells; t:requires_grad(flag) sets it and returns t.
int tensor_requires_grad(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  if (lua_isnone(L, 2)) {
    int on = 0;
    check(L, kiln_tensor_requires_grad(t, &on));
    lua_pushboolean(L, on);
    return 1;
  }
  luaL_checktype(L, 2, LUA_TBOOLEAN);
  check(L, kiln_tensor_set_requires_grad(t, lua_toboolean(L, 2)));
  lua_settop(L, 1);
  return 1;
}

int tensor_detach(lua_State* L) {
  kiln_tensor* out = nullptr;
  check(L, kiln_tensor_detach(check_tensor(L, 1), &out));
  push_tensor(L, out);
  return 1;
}

int tensor_zero_grad(lua_State* L) {
  check(L, kiln_tensor_zero_grad(check_tensor(L, 1)));
  lua_settop(L, 1);
  return 1;
}

// A copy with its own memory; gradients flow back through it.
int tensor_clone(lua_State* L) {
  push_tensor(L, call_op1(L, "copy", {check_tensor(L, 1)}));
  return 1;
}

// t:copy_(src): src's values into t in place (converted; not recorded for
// gradients); returns t.
int tensor_copy_(lua_State* L) {
  kiln_tensor* dst = check_tensor(L, 1);
  const TensorArg src(L, 2, dst);
  check(L, kiln_tensor_assign(dst, src.get()));
  lua_settop(L, 1);
  return 1;
}

}  // namespace

int tensor_grad(lua_State* L, kiln_tensor* t) {
  kiln_tensor* grad = nullptr;
  check(L, kiln_tensor_grad(t, &grad));
  if (grad == nullptr) lua_pushnil(L);
  else push_tensor(L, grad);
  return 1;
}

void add_tensor_autograd_methods(lua_State* L) {
  const luaL_Reg methods[] = {
      {"backward", guarded<tensor_backward>}, {"requires_grad", guarded<tensor_requires_grad>},
      {"detach", guarded<tensor_detach>},     {"zero_grad", guarded<tensor_zero_grad>},
      {"clone", guarded<tensor_clone>},       {"copy_", guarded<tensor_copy_>},
      {nullptr, nullptr},
  };
  luaL_setfuncs(L, methods, 0);
}

}  // namespace kiln::lua
