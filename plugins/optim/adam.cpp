// Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight
// decay: p *= 1 - lr * weight_decay), with AMSGrad, as torch.optim.Adam and
// torch.optim.AdamW compute them.
#include <cmath>

#include "optimizers.hpp"

namespace kiln_optim {
namespace {

constexpr double kBetas[] = {0.9, 0.999};

template <bool Decoupled>
struct AdamFamily {
  static constexpr const char* kName = Decoupled ? "AdamW" : "Adam";
  static constexpr kiln_attr_spec kHyper[] = {
      {{"lr", KILN_ATTR_FLOAT, {.f = 1e-3}}, 0, "learning rate"},
      {{"betas", KILN_ATTR_FLOATS, {.floats = {kBetas, 2}}},
       0,
       "decay rates of the running averages of the gradient and of its square"},
      {{"eps", KILN_ATTR_FLOAT, {.f = 1e-8}}, 0, "added to the denominator for numerical stability"},
      {{"weight_decay", KILN_ATTR_FLOAT, {.f = Decoupled ? 1e-2 : 0.0}},
       0,
       Decoupled ? "decoupled weight decay: p *= 1 - lr * weight_decay" : "L2 penalty, added to the gradient"},
      {{"amsgrad", KILN_ATTR_BOOL, {.b = 0}}, 0, "use the maximum of the past squared-gradient averages (AMSGrad)"},
  };

  struct Betas {
    double beta1, beta2;
  };

  static Betas betas(const Attrs& h) {
    const std::vector<double> b = h.numbers("betas");
    if (b.size() != 2) fail(KILN_ERR_INVALID_ARGUMENT, "betas must hold 2 numbers, got " + to_text(int64_t(b.size())));
    return {b[0], b[1]};
  }

  static void check(const Attrs& h) {
    require_at_least("lr", h.number("lr"), 0.0);
    require_at_least("eps", h.number("eps"), 0.0);
    require_at_least("weight_decay", h.number("weight_decay"), 0.0);
    const Betas b = betas(h);
    require_at_least("betas[0]", b.beta1, 0.0);
    require_below("betas[0]", b.beta1, 1.0);
    require_at_least("betas[1]", b.beta2, 0.0);
    require_below("betas[1]", b.beta2, 1.0);
  }

  static void init_state(const StateInit& init, const Attrs& h) {
    init.add_like_param("exp_avg", 0.0);
    init.add_like_param("exp_avg_sq", 0.0);
    if (h.flag("amsgrad")) init.add_like_param("max_exp_avg_sq", 0.0);
  }

  static void update(const Update& u) {
    const TensorOps& ops = u.ops;
    const double lr = u.hyper.number("lr"), weight_decay = u.hyper.number("weight_decay");
    const Betas b = betas(u.hyper);
    if (Decoupled) ops.assign(u.param, ops.scale(u.param, 1 - lr * weight_decay).get());
    const Tensor g = u.gradient(Decoupled ? 0.0 : weight_decay, false);

    kiln_tensor* exp_avg = u.state_at(0);
    kiln_tensor* exp_avg_sq = u.state_at(1);
    ops.assign(exp_avg, ops.add_scaled(ops.scale(exp_avg, b.beta1).get(), g.get(), 1 - b.beta1).get());
    const Tensor g2 = ops.mul(g.get(), g.get());
    ops.assign(exp_avg_sq, ops.add_scaled(ops.scale(exp_avg_sq, b.beta2).get(), g2.get(), 1 - b.beta2).get());

    const double bias_correction1 = 1 - std::pow(b.beta1, double(u.step));
    const double bias_correction2 = 1 - std::pow(b.beta2, double(u.step));
    const double step_size = lr / bias_correction1;
    kiln_tensor* second_moment = exp_avg_sq;
    if (u.hyper.flag("amsgrad")) {
      second_moment = u.state_at(2);
      ops.assign(second_moment, ops.maximum(second_moment, exp_avg_sq).get());
    }
    const Tensor root = ops.scale(ops.sqrt(second_moment).get(), 1 / std::sqrt(bias_correction2));
    const Tensor denom = ops.shift(root.get(), u.hyper.number("eps"));
    const Tensor ratio = ops.div(exp_avg, denom.get());
    ops.assign(u.param, ops.add_scaled(u.param, ratio.get(), -step_size).get());
  }
};

}  // namespace

kiln_optimizer_type adam_type(kiln_runtime* rt) { return optimizer_type<AdamFamily<false>>(rt); }
kiln_optimizer_type adamw_type(kiln_runtime* rt) { return optimizer_type<AdamFamily<true>>(rt); }

}  // namespace kiln_optim
