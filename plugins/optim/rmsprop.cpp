// RMSprop with momentum, centering and L2 weight decay, as
// torch.optim.RMSprop computes it.
#include "optimizers.hpp"

namespace kiln_optim {
namespace {

struct RmsProp {
  static constexpr const char* kName = "RMSprop";
  static constexpr kiln_attr_spec kHyper[] = {
      {{"lr", KILN_ATTR_FLOAT, {.f = 1e-2}}, 0, "learning rate"},
      {{"alpha", KILN_ATTR_FLOAT, {.f = 0.99}}, 0, "decay rate of the running average of the squared gradient"},
      {{"eps", KILN_ATTR_FLOAT, {.f = 1e-8}}, 0, "added to the denominator for numerical stability"},
      {{"weight_decay", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "L2 penalty, added to the gradient"},
      {{"momentum", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "momentum factor"},
      {{"centered", KILN_ATTR_BOOL, {.b = 0}}, 0, "divide by the estimated variance instead of the second moment"},
  };

  static void check(const Attrs& h) {
    require_at_least("lr", h.number("lr"), 0.0);
    require_at_least("alpha", h.number("alpha"), 0.0);
    require_at_least("eps", h.number("eps"), 0.0);
    require_at_least("weight_decay", h.number("weight_decay"), 0.0);
    require_at_least("momentum", h.number("momentum"), 0.0);
  }

  // momentum_buffer is made even while momentum is 0: momentum is a number
  // that may be set later. centered is fixed at creation.
  static void init_state(const StateInit& init, const Attrs& h) {
    init.add_like_param("square_avg", 0.0);
    init.add_like_param("momentum_buffer", 0.0);
    if (h.flag("centered")) init.add_like_param("grad_avg", 0.0);
  }

  static void update(const Update& u) {
    const TensorOps& ops = u.ops;
    const double lr = u.hyper.number("lr"), alpha = u.hyper.number("alpha"), momentum = u.hyper.number("momentum");
    const Tensor g = u.gradient(u.hyper.number("weight_decay"));

    kiln_tensor* square_avg = u.state_at(0);
    const Tensor g2 = ops.mul(g.get(), g.get());
    ops.assign(square_avg, ops.add_scaled(ops.scale(square_avg, alpha).get(), g2.get(), 1 - alpha).get());
    Tensor avg;
    if (u.hyper.flag("centered")) {
      kiln_tensor* grad_avg = u.state_at(2);
      ops.assign(grad_avg, ops.add_scaled(ops.scale(grad_avg, alpha).get(), g.get(), 1 - alpha).get());
      const Tensor mean2 = ops.mul(grad_avg, grad_avg);
      avg = ops.sqrt(ops.sub(square_avg, mean2.get()).get());
    } else {
      avg = ops.sqrt(square_avg);
    }
    avg = ops.shift(avg.get(), u.hyper.number("eps"));

    const Tensor ratio = ops.div(g.get(), avg.get());
    if (momentum > 0) {
      kiln_tensor* buf = u.state_at(1);
      ops.assign(buf, ops.add(ops.scale(buf, momentum).get(), ratio.get()).get());
      ops.assign(u.param, ops.add_scaled(u.param, buf, -lr).get());
    } else {
      ops.assign(u.param, ops.add_scaled(u.param, ratio.get(), -lr).get());
    }
  }
};

}  // namespace

kiln_optimizer_type rmsprop_type(kiln_runtime* rt) { return optimizer_type<RmsProp>(rt); }

}  // namespace kiln_optim
