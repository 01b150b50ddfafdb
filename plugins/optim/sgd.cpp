// SGD with momentum, dampening, Nesterov momentum and L2 weight decay, as
// torch.optim.SGD computes it, through the runtime's fused "sgd_update".
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

  static constexpr const char* kOp = "sgd_update";
  static size_t state_lists(const Attrs& h) { return h.number("momentum") != 0 ? 1 : 0; }
  // The buffer starts as the first gradient (PyTorch: "buf is None").
  static std::vector<kiln_attr> op_attrs(const Attrs& h, int64_t step) {
    return {kiln_attr_float("lr", h.number("lr")),
            kiln_attr_float("momentum", h.number("momentum")),
            kiln_attr_float("dampening", h.number("dampening")),
            kiln_attr_bool("nesterov", h.flag("nesterov")),
            kiln_attr_float("weight_decay", h.number("weight_decay")),
            kiln_attr_bool("maximize", h.flag("maximize")),
            kiln_attr_bool("first_step", step == 1)};
  }
};

}  // namespace

kiln_optimizer_type sgd_type(kiln_runtime* rt) { return optimizer_type<Sgd>(rt); }

}  // namespace kiln_optim
