// Arithmetic on tensors: + - * / ^ and unary minus with tensors or numbers
// on either side (broadcasting as the runtime's ops do), == as identity,
// < and <= on one-element tensors, and reductions (argmax and argmin
// among them) over dims given as arguments. Other math (t:matmul(u), t:abs(), t:maximum(u), ...) is the
// runtime's ops, reached as every op is (tensor.cpp).
#include "tensor_methods.hpp"
#include "tensor_util.hpp"

namespace kiln::lua {
namespace {

// The tensor among the two operands of a metamethod: a number on the other
// side becomes a scalar of its dtype and device.
kiln_tensor* operand_tensor(lua_State* L) {
  if (kiln_tensor* t = static_cast<kiln_tensor*>(test_handle(L, 1, kTensor))) return t;
  return check_tensor(L, 2);
}

// __add, __sub, __mul, __div: the op's name is upvalue 1.
int tensor_binary(lua_State* L) {
  kiln_tensor* like = operand_tensor(L);
  const TensorArg a(L, 1, like), b(L, 2, like);
  push_tensor(L, call_op1(L, lua_tostring(L, lua_upvalueindex(1)), {a.get(), b.get()}));
  return 1;
}

int tensor_unm(lua_State* L) {
  push_tensor(L, call_op1(L, "neg", {check_tensor(L, 1)}));
  return 1;
}

// t ^ number is the runtime's pow; otherwise a ^ b = exp(b * log(a)), so
// the base must be positive.
int tensor_pow(lua_State* L) {
  if (lua_type(L, 2) == LUA_TNUMBER) {
    push_tensor(L, call_op1(L, "pow", {check_tensor(L, 1)}, {kiln_attr_float("exponent", lua_tonumber(L, 2))}));
    return 1;
  }
  kiln_tensor* like = operand_tensor(L);
  const TensorArg base(L, 1, like), exponent(L, 2, like);
  TensorRef log_base(call_op1(L, "log", {base.get()}));
  TensorRef product(call_op1(L, "mul", {exponent.get(), log_base.get()}));
  push_tensor(L, call_op1(L, "exp", {product.get()}));
  return 1;
}

// Lua wants a boolean from ==: two values are equal when they are the same
// tensor. Element-wise equality is t:eq(u).
int tensor_identical(lua_State* L) {
  void* a = test_handle(L, 1, kTensor);
  lua_pushboolean(L, a != nullptr && a == test_handle(L, 2, kTensor));
  return 1;
}

// The value of a one-element tensor or a number, for < and <=.
double scalar_value(lua_State* L, int index, const char* op) {
  if (lua_type(L, index) == LUA_TNUMBER) return lua_tonumber(L, index);
  kiln_tensor* t = check_tensor(L, index);
  const std::vector<double> values = read_values(L, t);
  if (values.size() != 1)
    raise_message(L, lua_pushfstring(L, "'%s' compares one-element tensors, got one with %d elements (use t:lt(u) "
                                        "and friends for element-wise comparisons)", op, int(values.size())));
  return values[0];
}

int tensor_lt(lua_State* L) {
  lua_pushboolean(L, scalar_value(L, 1, "<") < scalar_value(L, 2, "<"));
  return 1;
}

int tensor_le(lua_State* L) {
  lua_pushboolean(L, scalar_value(L, 1, "<=") <= scalar_value(L, 2, "<="));
  return 1;
}

// t:sum(dims?, keepdim?) and the other reductions: the op's name is upvalue
// 1, the attribute that takes the dims upvalue 2 ("dims", or "dim" for
// argmax and argmin, which take at most one); dims is nil (all), a dim or a
// list of dims.
int tensor_reduce(lua_State* L) {
  kiln_tensor* t = check_tensor(L, 1);
  const std::vector<int64_t> dims = opt_dims(L, 2);
  const bool keepdim = lua_toboolean(L, 3);
  push_tensor(L, call_op1(L, lua_tostring(L, lua_upvalueindex(1)), {t},
                          {kiln_attr_ints(lua_tostring(L, lua_upvalueindex(2)), dims.data(), dims.size()),
                           kiln_attr_bool("keepdim", keepdim)}));
  return 1;
}

void set_closures(lua_State* L, const char* const (*names)[2], size_t n, lua_CFunction fn) {
  for (size_t i = 0; i < n; ++i) {
    lua_pushstring(L, names[i][1]);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, names[i][0]);
  }
}

}  // namespace

void add_tensor_math_methods(lua_State* L) {
  const char* const reductions[][2] = {{"sum", "dims"}, {"mean", "dims"}, {"max", "dims"},       {"min", "dims"},
                                       {"var", "dims"}, {"std", "dims"},  {"prod", "dims"},      {"any", "dims"},
                                       {"all", "dims"}, {"logsumexp", "dims"}, {"argmax", "dim"}, {"argmin", "dim"}};
  for (const auto& [name, dims_attr] : reductions) {
    lua_pushstring(L, name);
    lua_pushstring(L, dims_attr);
    lua_pushcclosure(L, guarded<tensor_reduce>, 2);
    lua_setfield(L, -2, name);
  }
}

void add_tensor_arithmetic_metamethods(lua_State* L) {
  const char* const binary[][2] = {{"__add", "add"}, {"__sub", "sub"}, {"__mul", "mul"}, {"__div", "div"}};
  set_closures(L, binary, std::size(binary), guarded<tensor_binary>);
  const luaL_Reg metamethods[] = {
      {"__unm", guarded<tensor_unm>}, {"__pow", guarded<tensor_pow>}, {"__eq", guarded<tensor_identical>},
      {"__lt", guarded<tensor_lt>},   {"__le", guarded<tensor_le>},   {nullptr, nullptr},
  };
  luaL_setfuncs(L, metamethods, 0);
}

}  // namespace kiln::lua
