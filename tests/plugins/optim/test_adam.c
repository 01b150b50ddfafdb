/* Adam and AdamW against torch.optim.Adam's and AdamW's formulas, one
 * option at a time. */
#include "check.h"
#include "kiln_test_support.h"
#include "optim_support.h"
#include "references.h"

static void check_adam(kiln_runtime* rt, const char* what, adam_options o) {
  const double betas[2] = {o.beta1, o.beta2};
  kiln_attr hyper[5];
  hyper[0] = kiln_attr_float("lr", o.lr);
  hyper[1] = kiln_attr_floats("betas", betas, 2);
  hyper[2] = kiln_attr_float("eps", o.eps);
  hyper[3] = kiln_attr_float("weight_decay", o.weight_decay);
  hyper[4] = kiln_attr_bool("amsgrad", o.amsgrad);
  CHECK(opt_check_trajectory(rt, what, o.decoupled ? "AdamW" : "Adam", hyper, 5, opt_adam_reference, &o, 8) == 0);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  {
    const adam_options adam = {0.01, 0.9, 0.999, 1e-8, 0, 0, 0};
    const adam_options betas = {0.01, 0.8, 0.95, 1e-3, 0, 0, 0};
    const adam_options l2 = {0.01, 0.9, 0.999, 1e-8, 0.1, 0, 0};
    const adam_options amsgrad = {0.01, 0.9, 0.99, 1e-8, 0, 1, 0};
    const adam_options adamw = {0.01, 0.9, 0.999, 1e-8, 0.1, 0, 1};
    const adam_options adamw_amsgrad = {0.02, 0.85, 0.9, 1e-6, 0.05, 1, 1};
    check_adam(rt, "Adam", adam);
    check_adam(rt, "Adam with its own betas and eps", betas);
    check_adam(rt, "Adam with weight decay", l2);
    check_adam(rt, "Adam with AMSGrad", amsgrad);
    check_adam(rt, "AdamW", adamw);
    check_adam(rt, "AdamW with AMSGrad", adamw_amsgrad);
  }
  {
    /* Defaults: Adam lr 1e-3 without decay, AdamW lr 1e-3 with decay 1e-2. */
    const adam_options adam = {1e-3, 0.9, 0.999, 1e-8, 0, 0, 0};
    const adam_options adamw = {1e-3, 0.9, 0.999, 1e-8, 1e-2, 0, 1};
    CHECK(opt_check_trajectory(rt, "Adam with defaults", "Adam", NULL, 0, opt_adam_reference, &adam, 6) == 0);
    CHECK(opt_check_trajectory(rt, "AdamW with defaults", "AdamW", NULL, 0, opt_adam_reference, &adamw, 6) == 0);
  }
  kiln_runtime_release(rt);
  return check_report("plugins/optim/adam");
}
