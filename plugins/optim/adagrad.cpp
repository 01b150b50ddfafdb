// Adagrad with learning-rate decay and L2 weight decay, as
// torch.optim.Adagrad computes it.
#include "optimizers.hpp"

namespace kiln_optim {
namespace {

struct Adagrad {
  static constexpr const char* kName = "Adagrad";
  static constexpr kiln_attr_spec kHyper[] = {
      {{"lr", KILN_ATTR_FLOAT, {.f = 1e-2}}, 0, "learning rate"},
      {{"lr_decay", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "the rate at step t is lr / (1 + (t - 1) * lr_decay)"},
      {{"weight_decay", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "L2 penalty, added to the gradient"},
      {{"initial_accumulator_value", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "starting value of the sum of squares"},
      {{"eps", KILN_ATTR_FLOAT, {.f = 1e-10}}, 0, "added to the denominator for numerical stability"},
  };

  static void check(const Attrs& h) {
    require_at_least("lr", h.number("lr"), 0.0);
    require_at_least("lr_decay", h.number("lr_decay"), 0.0);
    require_at_least("weight_decay", h.number("weight_decay"), 0.0);
    require_at_least("initial_accumulator_value", h.number("initial_accumulator_value"), 0.0);
    require_at_least("eps", h.number("eps"), 0.0);
  }

  static void init_state(const StateInit& init, const Attrs& h) {
    init.add_like_param("sum", h.number("initial_accumulator_value"));
  }

  static void update(const Update& u) {
    const TensorOps& ops = u.ops;
    const Tensor g = u.gradient(u.hyper.number("weight_decay"));
    const double clr = u.hyper.number("lr") / (1 + double(u.step - 1) * u.hyper.number("lr_decay"));

    kiln_tensor* sum = u.state_at(0);
    const Tensor g2 = ops.mul(g.get(), g.get());
    ops.assign(sum, ops.add(sum, g2.get()).get());
    const Tensor std = ops.shift(ops.sqrt(sum).get(), u.hyper.number("eps"));
    const Tensor ratio = ops.div(g.get(), std.get());
    ops.assign(u.param, ops.add_scaled(u.param, ratio.get(), -clr).get());
  }
};

}  // namespace

kiln_optimizer_type adagrad_type(kiln_runtime* rt) { return optimizer_type<Adagrad>(rt); }

}  // namespace kiln_optim
