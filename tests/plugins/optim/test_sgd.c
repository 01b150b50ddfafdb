/* SGD against torch.optim.SGD's formulas, one option at a time. */
#include "check.h"
#include "kiln_test_support.h"
#include "optim_support.h"
#include "references.h"

static void check_sgd(kiln_runtime* rt, const char* what, sgd_options o) {
  kiln_attr hyper[6];
  hyper[0] = kiln_attr_float("lr", o.lr);
  hyper[1] = kiln_attr_float("momentum", o.momentum);
  hyper[2] = kiln_attr_float("dampening", o.dampening);
  hyper[3] = kiln_attr_float("weight_decay", o.weight_decay);
  hyper[4] = kiln_attr_bool("nesterov", o.nesterov);
  hyper[5] = kiln_attr_bool("maximize", o.maximize);
  CHECK(opt_check_trajectory(rt, what, "SGD", hyper, 6, opt_sgd_reference, &o, 6) == 0);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  {
    const sgd_options plain = {0.1, 0, 0, 0, 0, 0};
    const sgd_options momentum = {0.1, 0.9, 0, 0, 0, 0};
    const sgd_options dampening = {0.1, 0.9, 0.3, 0, 0, 0};
    const sgd_options nesterov = {0.1, 0.9, 0, 0, 1, 0};
    const sgd_options weight_decay = {0.1, 0, 0, 0.05, 0, 0};
    const sgd_options everything = {0.05, 0.8, 0, 0.1, 1, 0};
    const sgd_options maximize = {0.1, 0.5, 0.1, 0.02, 0, 1};
    check_sgd(rt, "SGD", plain);
    check_sgd(rt, "SGD with momentum", momentum);
    check_sgd(rt, "SGD with dampening", dampening);
    check_sgd(rt, "SGD with Nesterov momentum", nesterov);
    check_sgd(rt, "SGD with weight decay", weight_decay);
    check_sgd(rt, "SGD with Nesterov momentum and weight decay", everything);
    check_sgd(rt, "SGD maximizing", maximize);
  }
  {
    /* The defaults are plain SGD with lr 1e-3. */
    const sgd_options defaults = {1e-3, 0, 0, 0, 0, 0};
    CHECK(opt_check_trajectory(rt, "SGD with defaults", "SGD", NULL, 0, opt_sgd_reference, &defaults, 6) == 0);
  }
  kiln_runtime_release(rt);
  return check_report("plugins/optim/sgd");
}
