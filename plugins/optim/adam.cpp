// Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight
// decay: p *= 1 - lr * weight_decay), with AMSGrad, as torch.optim.Adam and
// torch.optim.AdamW compute them, through the runtime's fused "adam_update".
#include <vector>

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

  static constexpr const char* kOp = "adam_update";
  static size_t state_lists(const Attrs& h) { return h.flag("amsgrad") ? 3 : 2; }
  static std::vector<kiln_attr> op_attrs(const Attrs& h, int64_t step) {
    const Betas b = betas(h);
    return {kiln_attr_float("lr", h.number("lr")),
            kiln_attr_float("beta1", b.beta1),
            kiln_attr_float("beta2", b.beta2),
            kiln_attr_float("eps", h.number("eps")),
            kiln_attr_float("weight_decay", h.number("weight_decay")),
            kiln_attr_bool("decoupled", Decoupled),
            kiln_attr_bool("amsgrad", h.flag("amsgrad")),
            kiln_attr_int("step", step)};
  }
};

}  // namespace

kiln_optimizer_type adam_type(kiln_runtime* rt) { return optimizer_type<AdamFamily<false>>(rt); }
kiln_optimizer_type adamw_type(kiln_runtime* rt) { return optimizer_type<AdamFamily<true>>(rt); }

}  // namespace kiln_optim
