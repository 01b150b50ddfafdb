#include "checkpoint/module_state.hpp"

#include "handles.hpp"
#include "train/api_call.hpp"

namespace kiln::abi {
namespace {

using Count = kiln_status (*)(const kiln_module*, size_t*);
using Get = kiln_status (*)(const kiln_module*, size_t, const char**, kiln_tensor**);

void append(const kiln_module* model, Count count, Get get, const char* what, StateTensors& out) {
  size_t n = 0;
  train::check_call(count(model, &n), what);
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    kiln_tensor* t = nullptr;
    train::check_call(get(model, i, &name, &t), what);
    const TensorRef owned = TensorRef::adopt(t);
    out.push_back({name, owned->tensor});
  }
}

}  // namespace

StateTensors module_state(const kiln_module* model) {
  StateTensors state;
  append(model, kiln_module_parameter_count, kiln_module_parameter, "listing the model's parameters", state);
  append(model, kiln_module_buffer_count, kiln_module_buffer, "listing the model's buffers", state);
  return state;
}

}  // namespace kiln::abi
