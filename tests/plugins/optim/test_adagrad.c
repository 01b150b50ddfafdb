/* Adagrad against torch.optim.Adagrad's formulas, one option at a time. */
#include "check.h"
#include "kiln_test_support.h"
#include "optim_support.h"
#include "references.h"

static void check_adagrad(kiln_runtime* rt, const char* what, adagrad_options o) {
  kiln_attr hyper[5];
  hyper[0] = kiln_attr_float("lr", o.lr);
  hyper[1] = kiln_attr_float("lr_decay", o.lr_decay);
  hyper[2] = kiln_attr_float("weight_decay", o.weight_decay);
  hyper[3] = kiln_attr_float("initial_accumulator_value", o.initial_accumulator_value);
  hyper[4] = kiln_attr_float("eps", o.eps);
  CHECK(opt_check_trajectory(rt, what, "Adagrad", hyper, 5, opt_adagrad_reference, &o, 7) == 0);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  {
    const adagrad_options plain = {0.1, 0, 0, 0, 1e-10};
    const adagrad_options lr_decay = {0.1, 0.2, 0, 0, 1e-10};
    const adagrad_options weight_decay = {0.1, 0, 0.1, 0, 1e-10};
    const adagrad_options accumulator = {0.1, 0, 0, 0.5, 1e-3};
    const adagrad_options defaults = {1e-2, 0, 0, 0, 1e-10};
    check_adagrad(rt, "Adagrad", plain);
    check_adagrad(rt, "Adagrad with lr decay", lr_decay);
    check_adagrad(rt, "Adagrad with weight decay", weight_decay);
    check_adagrad(rt, "Adagrad with an initial accumulator and eps", accumulator);
    CHECK(opt_check_trajectory(rt, "Adagrad with defaults", "Adagrad", NULL, 0, opt_adagrad_reference, &defaults, 6) ==
          0);
  }
  kiln_runtime_release(rt);
  return check_report("plugins/optim/adagrad");
}
