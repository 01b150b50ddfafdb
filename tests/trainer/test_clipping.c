/* Gradient clipping: the reported grad_norm is the norm of the gradient
 * computed here by hand (cross-entropy of a Linear layer), the update
 * without clipping is -lr * gradient, and with a tiny clip_grad_norm the
 * update is that gradient scaled to the clip: its norm is lr * clip. */
#include <math.h>

#include "check.h"
#include "trainer_support.h"

#define N 32
#define B 8
#define LR 0.1

/* d(mean cross-entropy)/d(weight, bias) over the first B examples. */
static double hand_gradient(const blobs* b, const double p[LINEAR_PARAMS], double g[LINEAR_PARAMS]) {
  double norm = 0;
  int i, k;
  memset(g, 0, LINEAR_PARAMS * sizeof(double));
  for (i = 0; i < B; ++i) {
    const double x0 = b->x[2 * i], x1 = b->x[2 * i + 1];
    const double z0 = p[0] * x0 + p[1] * x1 + p[4], z1 = p[2] * x0 + p[3] * x1 + p[5];
    const double top = z0 > z1 ? z0 : z1, e0 = exp(z0 - top), e1 = exp(z1 - top);
    const double dz[2] = {(e0 / (e0 + e1) - (b->y[i] == 0)) / B, (e1 / (e0 + e1) - (b->y[i] == 1)) / B};
    for (k = 0; k < 2; ++k) {
      g[2 * k] += dz[k] * x0;
      g[2 * k + 1] += dz[k] * x1;
      g[4 + k] += dz[k];
    }
  }
  for (i = 0; i < LINEAR_PARAMS; ++i) norm += g[i] * g[i];
  return sqrt(norm);
}

static int close_to(double got, double want, double rtol) { return fabs(got - want) <= 1e-7 + rtol * fabs(want); }

/* One step with clip_grad_norm `clip`; checks grad_norm and the update,
 * and that clipping happened when `clipped`. */
static void one_step(double clip, int clipped) {
  kiln_runtime* rt = open_runtime(21);
  blobs data;
  kiln_loader* loader;
  kiln_module* model;
  kiln_optimizer* opt;
  kiln_trainer* trainer = NULL;
  kiln_trainer_options o;
  kiln_step_metrics m;
  double before[LINEAR_PARAMS], after[LINEAR_PARAMS], g[LINEAR_PARAMS], step_norm = 0, norm, scale;
  int done = 1, i;

  blobs_make(rt, N, 6, &data);
  loader = make_loader(&data, B, 0);
  model = make_linear(rt);
  opt = make_sgd(rt, model, LR);
  o = trainer_options(model, opt, loader);
  o.clip_grad_norm = clip;
  CHECK_OK(kiln_trainer_create(rt, &o, &trainer));
  read_linear(model, before);
  norm = hand_gradient(&data, before, g);
  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  CHECK_OK(kiln_trainer_step(trainer, &m, &done));
  CHECK(done == 0);
  read_linear(model, after);
  CHECK(close_to(m.grad_norm, norm, 1e-4));
  scale = clip > 0 && norm > clip ? clip / norm : 1.0;
  CHECK((scale < 1.0) == clipped);
  for (i = 0; i < LINEAR_PARAMS; ++i) {
    const double delta = after[i] - before[i];
    step_norm += delta * delta;
    CHECK(close_to(delta, -LR * scale * g[i], 1e-2));
  }
  step_norm = sqrt(step_norm);
  if (scale < 1.0) CHECK(step_norm <= LR * clip * 1.01 && step_norm >= LR * clip * 0.99);
  kiln_trainer_release(trainer);
  kiln_optimizer_release(opt);
  kiln_module_release(model);
  kiln_loader_release(loader);
  blobs_free(&data);
  kiln_runtime_release(rt);
}

int main(void) {
  one_step(0.0, 0);   /* no clipping: grad_norm is still reported */
  one_step(1e3, 0);   /* a clip above the norm changes nothing */
  one_step(1e-3, 1);  /* a tiny clip bounds the update */
  return check_report("trainer/clipping");
}
