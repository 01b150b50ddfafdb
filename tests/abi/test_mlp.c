/* The C host example's training (examples/c_mlp) learns: the loss of a small
 * MLP built from ops through kiln.h falls by a large factor in 50 steps. */
#include "check.h"
#include "mlp.h"

int main(void) {
  kiln_runtime_options options = {.size = sizeof(kiln_runtime_options), .seed = 42};
  kiln_runtime* rt = NULL;
  mlp_summary summary = {0.0f, 0.0f};
  CHECK_OK(kiln_runtime_create(&options, &rt));
  CHECK_OK(mlp_train(rt, 50, 0.5f, NULL, NULL, &summary));
  printf("loss %.4f -> %.4f\n", summary.first_loss, summary.last_loss);
  CHECK(summary.first_loss > 0.3f);                      /* about log(2) untrained */
  CHECK(summary.last_loss < summary.first_loss / 10.0f); /* and it learned */
  kiln_runtime_release(rt);
  return check_report("abi/mlp");
}
