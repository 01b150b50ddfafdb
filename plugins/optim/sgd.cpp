// SGD with momentum, dampening, Nesterov momentum and L2 weight decay, as
// torch.optim.SGD computes it.
#include "optimizers.hpp"

namespace kiln_optim {
namespace {

struct Sgd {
  static constexpr const char* kName = "SGD";
  static constexpr kiln_attr_spec kHyper[] = {
      {{"lr", KILN_ATTR_FLOAT, {.f = 1e-3}}, 0, "learning rate"},
      {{"momentum", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "momentum factor"},
      {{"dampening", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "dampening of the momentum"},
      {{"nesterov", KILN_ATTR_BOOL, {.b = 0}}, 0, "Nesterov momentum (needs momentum > 0 and dampening 0)"},
      {{"weight_decay", KILN_ATTR_FLOAT, {.f = 0.0}}, 0, "L2 penalty, added to the gradient"},
      {{"maximize", KILN_ATTR_BOOL, {.b = 0}}, 0, "maximize the objective instead of minimizing it"},
  };

  static void check(const Attrs& h) {
    require_at_least("lr", h.number("lr"), 0.0);
    require_at_least("momentum", h.number("momentum"), 0.0);
    require_at_least("weight_decay", h.number("weight_decay"), 0.0);
    if (h.flag("nesterov") && (h.number("momentum") <= 0 || h.number("dampening") != 0))
      fail(KILN_ERR_INVALID_ARGUMENT, "nesterov requires a momentum > 0 and zero dampening");
  }

  // The buffer is made even while momentum is 0: momentum is a number that
  // may be set later, and state is only made before the first update.
  static void init_state(const StateInit& init, const Attrs&) { init.add_like_param("momentum_buffer", 0.0); }

  static void update(const Update& u) {
    const double lr = u.hyper.number("lr"), momentum = u.hyper.number("momentum");
    Tensor d = u.gradient(u.hyper.number("weight_decay"), u.hyper.flag("maximize"));
    if (momentum != 0) {
      kiln_tensor* buf = u.state_at(0);
      // The buffer starts as the first gradient (PyTorch: "buf is None").
      if (u.step == 1) {
        u.ops.assign(buf, d.get());
      } else {
        const Tensor decayed = u.ops.scale(buf, momentum);
        u.ops.assign(buf, u.ops.add_scaled(decayed.get(), d.get(), 1 - u.hyper.number("dampening")).get());
      }
      d = u.hyper.flag("nesterov") ? u.ops.add_scaled(d.get(), buf, momentum) : retained(buf);
    }
    u.ops.assign(u.param, u.ops.add_scaled(u.param, d.get(), -lr).get());
  }
};

}  // namespace

kiln_optimizer_type sgd_type(kiln_runtime* rt) { return optimizer_type<Sgd>(rt); }

}  // namespace kiln_optim
