// Helpers for the tests of the fused optimizer updates (unit and GPU):
// parameter lists of given shapes, fresh gradients per step, and the call
// of "sgd_update" / "adam_update" on the lists laid end to end.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kiln/autograd/grad_mode.hpp"
#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

namespace kiln::test {

using UpdateAttrs = std::vector<std::pair<std::string, AttrValue>>;

// Tensors for `n_lists` lists over parameters of `shapes`, on `device`:
// params uniform in [-1, 1), the other lists (gradients, state) zero.
// lists[l][i] is list l's entry for parameter i.
inline std::vector<std::vector<Tensor>> make_update_lists(Runtime& rt, const std::vector<Shape>& shapes, int n_lists,
                                                          DType dtype, Device device = Device::cpu()) {
  std::vector<std::vector<Tensor>> lists(static_cast<size_t>(n_lists));
  for (size_t i = 0; i < shapes.size(); ++i) {
    lists[0].push_back(rt.call1("to", {random_tensor(rt, shapes[i], dtype, -1.0, 1.0, 100 + i)},
                                {{"device", to_string(device)}}));
    for (int l = 1; l < n_lists; ++l) lists[size_t(l)].push_back(rt.full(shapes[i], 0.0, dtype, device));
  }
  return lists;
}

// Writes step `step`'s gradients (uniform in [-1, 1), differing per step and
// parameter) into lists[1], and returns them as doubles.
inline std::vector<std::vector<double>> set_gradients(Runtime& rt, std::vector<std::vector<Tensor>>& lists, int step) {
  std::vector<std::vector<double>> grads;
  for (size_t i = 0; i < lists[1].size(); ++i) {
    Tensor& g = lists[1][i];
    const Tensor fresh = random_tensor(rt, g.shape(), g.dtype(), -1.0, 1.0, uint64_t(1000 * step) + i);
    g = rt.call1("to", {fresh}, {{"device", to_string(g.device())}});
    grads.push_back(values(rt, fresh));
  }
  return grads;
}

// Calls `op` on the lists end to end, with recording off (as an optimizer step does).
inline void run_update(Runtime& rt, const std::string& op, const std::vector<std::vector<Tensor>>& lists,
                       const UpdateAttrs& attrs) {
  std::vector<Tensor> inputs;
  for (const std::vector<Tensor>& list : lists) inputs.insert(inputs.end(), list.begin(), list.end());
  std::vector<std::pair<std::string_view, AttrValue>> named;
  for (const auto& [name, value] : attrs) named.emplace_back(name, value);
  const OpDef& def = rt.op(op);
  NoGradGuard no_grad(rt);
  rt.call(def, inputs, def.make_attrs(named));
}

}  // namespace kiln::test
