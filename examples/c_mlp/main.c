/* Trains the MLP of mlp.c and prints its loss every 10 steps. */
#include <stdio.h>

#include "mlp.h"

static void print_loss(int step, float loss, void* user_data) {
  (void)user_data;
  if (step % 10 == 0) printf("step %3d  loss %.4f\n", step, loss);
}

int main(void) {
  kiln_runtime_options options = {.size = sizeof(kiln_runtime_options), .seed = 42};
  kiln_runtime* rt = NULL;
  mlp_summary summary;
  kiln_status status = kiln_runtime_create(&options, &rt);
  if (status == KILN_OK) status = mlp_train(rt, 50, 0.5f, print_loss, NULL, &summary);
  kiln_runtime_release(rt);
  if (status != KILN_OK) {
    fprintf(stderr, "training failed (%s): %s\n", kiln_status_name(status), kiln_last_error());
    return 1;
  }
  printf("loss %.4f -> %.4f\n", summary.first_loss, summary.last_loss);
  return 0;
}
