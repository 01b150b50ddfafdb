// Turns an optimizer written as a C++ class into the plugin API's
// kiln_optimizer_type. The class provides:
//   static constexpr const char* kName;
//   static constexpr kiln_attr_spec kHyper[];        its hyper-parameters
//   static void check(const Attrs& hyper);            fails on values that make no sense
//   static void init_state(const StateInit&, const Attrs& hyper);
//   static void update(const Update&);
// Every callback catches what the class throws (see guarded).
#pragma once

#include <iterator>
#include <string>
#include <utility>

#include "attrs.hpp"
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
    if (i >= n_state)
      fail(KILN_ERR_INVALID_STATE, "the parameter has " + to_text(int64_t(n_state)) +
                                       " state tensors, fewer than this optimizer makes (was its state loaded "
                                       "from another optimizer type?)");
    return state[i];
  }
  // The gradient as PyTorch's optimizers use it: negated when maximizing,
  // plus weight_decay * param (L2 decay) when weight_decay is not 0.
  Tensor gradient(double weight_decay, bool maximize) const {
    Tensor g = maximize ? ops.neg(grad) : retained(grad);
    return weight_decay != 0 ? ops.add_scaled(g.get(), param, weight_decay) : std::move(g);
  }

  TensorOps ops;
  kiln_tensor* param;
  kiln_tensor* grad;
  kiln_tensor* const* state;
  size_t n_state;
  Attrs hyper;
  int64_t step;
};

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
  t.update = [](void*, const kiln_optimizer_update* call) { return guarded([&] { Optimizer::update(Update(call)); }); };
  t.check_hyper = [](void*, const kiln_attr* hyper, size_t n_hyper) {
    return guarded([&] { Optimizer::check(Attrs(hyper, n_hyper)); });
  };
  return t;
}

}  // namespace kiln_optim
