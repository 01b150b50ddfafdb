// Turns an optimizer written as a C++ class into the plugin API's
// kiln_optimizer_type. The class provides:
//   static constexpr const char* kName;
//   static constexpr kiln_attr_spec kHyper[];        its hyper-parameters
//   static void check(const Attrs& hyper);            fails on values that make no sense
//   static void init_state(const StateInit&, const Attrs& hyper);
// and either, updating through a fused op of the runtime (per parameter and
// per group, see fused_update.hpp):
//   static constexpr const char* kOp;
//   static size_t state_lists(const Attrs& hyper);    the state tensors the op takes
//   static std::vector<kiln_attr> op_attrs(const Attrs& hyper, int64_t step);
// or, composing the update of other ops, one parameter at a time:
//   static void update(const Update&);
// Every callback catches what the class throws (see guarded).
#pragma once

#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "attrs.hpp"
#include "fused_update.hpp"
#include "tensor_ops.hpp"

namespace kiln_optim {

// Where init_state adds a parameter's state tensors.
class StateInit {
 public:
  StateInit(kiln_optimizer_state_init* init, kiln_tensor* param, kiln_runtime* rt)
      : init_(init), param_(param), ops_(rt) {}
  // Adds a state tensor shaped, typed and placed like the parameter, filled with `value`.
  void add_like_param(const char* name, double value) const {
    const Tensor t = ops_.full_like(param_, value);
    check(host().optimizer_add_state(init_, name, t.get()));
  }

 private:
  kiln_optimizer_state_init* init_;
  kiln_tensor* param_;
  TensorOps ops_;
};

// Fails unless the parameters have the `needed` state tensors the update uses.
inline void require_state(size_t have, size_t needed) {
  if (have < needed)
    fail(KILN_ERR_INVALID_STATE, "the parameter has " + to_text(int64_t(have)) + " state tensors, fewer than the " +
                                     to_text(int64_t(needed)) +
                                     " this optimizer uses (was its state loaded from another optimizer type?)");
}

// A new reference on `t`.
inline Tensor retained(kiln_tensor* t) {
  host().tensor_retain(t);
  return Tensor(t);
}

// One parameter's update, as the host gives it.
struct Update {
  explicit Update(const kiln_optimizer_update* call)
      : ops(call->runtime),
        param(call->param),
        grad(call->grad),
        state(call->state),
        n_state(call->n_state),
        hyper(call->hyper, call->n_hyper),
        step(call->step) {}
  // State tensor `i`, in the order init_state added them.
  kiln_tensor* state_at(size_t i) const {
    require_state(n_state, i + 1);
    return state[i];
  }
  // The gradient as PyTorch's optimizers use it: plus weight_decay * param
  // (L2 decay) when weight_decay is not 0.
  Tensor gradient(double weight_decay) const {
    return weight_decay != 0 ? ops.add_scaled(grad, param, weight_decay) : retained(grad);
  }

  TensorOps ops;
  kiln_tensor* param;
  kiln_tensor* grad;
  kiln_tensor* const* state;
  size_t n_state;
  Attrs hyper;
  int64_t step;
};

// One fused update of `params` (all of one group, with `n_state` state tensors each).
template <class Optimizer>
void fused_update(kiln_runtime* rt, std::span<const FusedParameter> params, size_t n_state, const Attrs& hyper) {
  const size_t lists = Optimizer::state_lists(hyper);
  require_state(n_state, lists);
  run_fused(rt, Optimizer::kOp, params, lists, [&](int64_t step) { return Optimizer::op_attrs(hyper, step); });
}

// The type of `Optimizer` as registered in the runtime `rt`: init_state is
// given no runtime, and makes the state tensors in this one (an optimizer
// and its parameters belong to the runtime its type was registered in).
template <class Optimizer>
kiln_optimizer_type optimizer_type(kiln_runtime* rt) {
  kiln_optimizer_type t{};
  t.size = sizeof t;
  t.name = Optimizer::kName;
  t.hyper = Optimizer::kHyper;
  t.n_hyper = std::size(Optimizer::kHyper);
  t.user = rt;
  t.init_state = [](void* user, kiln_optimizer_state_init* init, kiln_tensor* param, const kiln_attr* hyper,
                    size_t n_hyper) {
    return guarded([&] {
      Optimizer::init_state(StateInit(init, param, static_cast<kiln_runtime*>(user)), Attrs(hyper, n_hyper));
    });
  };
  if constexpr (requires { Optimizer::kOp; }) {
    t.update = [](void*, const kiln_optimizer_update* call) {
      return guarded([&] {
        const FusedParameter p{call->param, call->grad, call->state, call->step};
        fused_update<Optimizer>(call->runtime, {&p, 1}, call->n_state, Attrs(call->hyper, call->n_hyper));
      });
    };
    t.update_group = [](void*, const kiln_optimizer_group_update* call) {
      return guarded([&] {
        std::vector<FusedParameter> params;
        params.reserve(call->n_params);
        for (size_t i = 0; i < call->n_params; ++i)
          params.push_back({call->params[i], call->grads[i], call->states[i], call->steps[i]});
        fused_update<Optimizer>(call->runtime, params, call->n_state, Attrs(call->hyper, call->n_hyper));
      });
    };
  } else {
    t.update = [](void*, const kiln_optimizer_update* call) {
      return guarded([&] { Optimizer::update(Update(call)); });
    };
  }
  t.check_hyper = [](void*, const kiln_attr* hyper, size_t n_hyper) {
    return guarded([&] { Optimizer::check(Attrs(hyper, n_hyper)); });
  };
  return t;
}

}  // namespace kiln_optim
