/* A two-layer MLP (2 -> 16 -> 2, ReLU) trained with plain SGD on a toy
 * problem: points of the plane, labelled by the side of a line they lie on.
 * Everything goes through kiln.h: ops looked up once, forward by op calls,
 * kiln_backward, and an update made of ops under a no-grad scope. */
#ifndef KILN_EXAMPLE_MLP_H
#define KILN_EXAMPLE_MLP_H

#include "kiln/kiln.h"

/* Called after every step with the loss that step computed. */
typedef void (*mlp_loss_fn)(int step, float loss, void* user_data);

typedef struct mlp_summary {
  float first_loss; /* the loss of step 0, before any update */
  float last_loss;  /* the loss of the last step */
} mlp_summary;

/* Trains a freshly initialised model for `steps` full-batch steps. `summary`
 * (caller-owned, not NULL) receives the losses; `on_loss` may be NULL. On failure returns the status; kiln_last_error() says why. */
kiln_status mlp_train(kiln_runtime* rt, int steps, float learning_rate, mlp_loss_fn on_loss, void* user_data,
                      mlp_summary* summary);

#endif /* KILN_EXAMPLE_MLP_H */
