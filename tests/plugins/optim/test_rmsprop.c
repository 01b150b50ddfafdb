/* RMSprop against torch.optim.RMSprop's formulas, one option at a time. */
#include "check.h"
#include "kiln_test_support.h"
#include "optim_support.h"
#include "references.h"

static void check_rmsprop(kiln_runtime* rt, const char* what, rmsprop_options o) {
  kiln_attr hyper[6];
  hyper[0] = kiln_attr_float("lr", o.lr);
  hyper[1] = kiln_attr_float("alpha", o.alpha);
  hyper[2] = kiln_attr_float("eps", o.eps);
  hyper[3] = kiln_attr_float("weight_decay", o.weight_decay);
  hyper[4] = kiln_attr_float("momentum", o.momentum);
  hyper[5] = kiln_attr_bool("centered", o.centered);
  CHECK(opt_check_trajectory(rt, what, "RMSprop", hyper, 6, opt_rmsprop_reference, &o, 7) == 0);
}

int main(void) {
  kiln_runtime* rt = NULL;
  CHECK_OK(kts_runtime_create(1, &rt));
  {
    const rmsprop_options plain = {0.01, 0.99, 1e-8, 0, 0, 0};
    const rmsprop_options alpha = {0.01, 0.9, 1e-4, 0, 0, 0};
    const rmsprop_options weight_decay = {0.01, 0.99, 1e-8, 0.1, 0, 0};
    const rmsprop_options momentum = {0.01, 0.99, 1e-8, 0, 0.5, 0};
    const rmsprop_options centered = {0.01, 0.9, 1e-8, 0, 0, 1};
    const rmsprop_options everything = {0.02, 0.95, 1e-6, 0.05, 0.7, 1};
    check_rmsprop(rt, "RMSprop", plain);
    check_rmsprop(rt, "RMSprop with its own alpha and eps", alpha);
    check_rmsprop(rt, "RMSprop with weight decay", weight_decay);
    check_rmsprop(rt, "RMSprop with momentum", momentum);
    check_rmsprop(rt, "RMSprop centered", centered);
    check_rmsprop(rt, "RMSprop centered with momentum and weight decay", everything);
    CHECK(opt_check_trajectory(rt, "RMSprop with defaults", "RMSprop", NULL, 0, opt_rmsprop_reference, &plain, 6) == 0);
  }
  kiln_runtime_release(rt);
  return check_report("plugins/optim/rmsprop");
}
