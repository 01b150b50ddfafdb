// Calling runtime ops by name from Lua, with each name looked up once per state.
#include "binding.hpp"
#include "state.hpp"
#include "tensor_ref.hpp"

namespace kiln::lua {
namespace {

// Enough for every op of the runtime (batch_norm gives three).
constexpr size_t kMaxOutputs = 8;

const kiln_op* find_op(lua_State* L, const char* name) {
  StateData& data = state_data(L);
  auto found = data.ops.find(name);
  if (found != data.ops.end()) return found->second;
  const kiln_op* op = nullptr;
  check(L, kiln_op_find(data.rt, name, &op));
  data.ops.emplace(name, op);
  return op;
}

}  // namespace

bool has_op(lua_State* L, const char* name) {
  StateData& data = state_data(L);
  if (data.ops.count(name) != 0) return true;
  const kiln_op* op = nullptr;
  if (kiln_op_find(data.rt, name, &op) != KILN_OK) return false;
  data.ops.emplace(name, op);
  return true;
}

int call_op(lua_State* L, const char* op, kiln_tensor* const* inputs, size_t n_inputs, const kiln_attr* attrs,
            size_t n_attrs) {
  kiln_tensor* outputs[kMaxOutputs] = {};
  size_t n_outputs = 0;
  check(L, kiln_op_call(runtime(L), find_op(L, op), inputs, n_inputs, attrs, n_attrs, outputs, kMaxOutputs,
                        &n_outputs));
  // Every output is owned before anything below can raise.
  TensorRef owned[kMaxOutputs];
  for (size_t i = 0; i < n_outputs; ++i) owned[i].reset(outputs[i]);
  luaL_checkstack(L, int(n_outputs), "too many op outputs");
  for (size_t i = 0; i < n_outputs; ++i) push_tensor(L, owned[i].release());
  return int(n_outputs);
}

kiln_tensor* call_op1(lua_State* L, const char* op, std::initializer_list<kiln_tensor*> inputs,
                      const std::vector<kiln_attr>& attrs) {
  kiln_tensor* out = nullptr;
  check(L, kiln_op_call1(runtime(L), find_op(L, op), inputs.begin(), inputs.size(), attrs.data(), attrs.size(), &out));
  return out;
}

}  // namespace kiln::lua
