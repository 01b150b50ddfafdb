/* Unloading the shipped optimizer and data plugins while an object of every
 * kind they register is alive: an optimizer, a learning-rate schedule, a data
 * source, a transform, and a loader whose worker thread calls into the
 * source. The types can no longer be created, every object still works, and
 * each library stays mapped until the last object it made is released (the
 * layer and strategy kinds: plugins/modules/lifetime, plugins/loader/unload).
 * Under the sanitizer build a call into an unmapped library is caught. */
#include "library_mapped.h"
#include "loader_support.h"

typedef struct {
  kiln_tensor* param;
  kiln_optimizer* optimizer;
  kiln_lr_schedule* schedule;
  kiln_data_source* source;
  kiln_transform* transform;
  kiln_loader* loader;
} objects;

static void create_objects(kiln_runtime* rt, objects* o) {
  const int64_t one = 1, shape[1] = {4};
  const double mean = 0.5, std = 0.25;
  const kiln_attr lr = kiln_attr_float("lr", 0.5);
  const kiln_attr step_size = kiln_attr_int("step_size", 2);
  const kiln_attr synthetic[3] = {kiln_attr_int("length", 6), kiln_attr_ints("shape", shape, 1),
                                  kiln_attr_int("num_classes", 3)};
  const kiln_attr normalize[2] = {kiln_attr_floats("mean", &mean, 1), kiln_attr_floats("std", &std, 1)};
  kiln_loader_options options = {0};
  options.size = sizeof options;
  options.batch_size = 2;
  options.num_workers = 1;
  CHECK_OK(kiln_tensor_full(rt, &one, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &o->param));
  CHECK_OK(kiln_tensor_set_requires_grad(o->param, 1));
  CHECK_OK(kiln_optimizer_create(rt, "SGD", &o->param, 1, &lr, 1, &o->optimizer));
  CHECK_OK(kiln_lr_schedule_create(rt, "step", &step_size, 1, &o->schedule));
  CHECK_OK(kiln_data_source_create(rt, "synthetic", synthetic, 3, &o->source));
  CHECK_OK(kiln_transform_create(rt, "normalize", normalize, 2, &o->transform));
  CHECK_OK(kiln_loader_create(o->source, &o->transform, 1, &options, &o->loader));
}

static void refused_after_unload(kiln_runtime* rt) {
  const kiln_attr lr = kiln_attr_float("lr", 0.5);
  kiln_tensor* p = NULL;
  kiln_optimizer* optimizer = NULL;
  kiln_lr_schedule* schedule = NULL;
  kiln_data_source* source = NULL;
  kiln_transform* transform = NULL;
  const int64_t one = 1;
  CHECK_OK(kiln_tensor_full(rt, &one, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &p));
  CHECK_ERROR(kiln_optimizer_create(rt, "SGD", &p, 1, &lr, 1, &optimizer), KILN_ERR_NOT_FOUND, "SGD");
  CHECK_ERROR(kiln_lr_schedule_create(rt, "step", NULL, 0, &schedule), KILN_ERR_NOT_FOUND, "step");
  CHECK_ERROR(kiln_data_source_create(rt, "synthetic", NULL, 0, &source), KILN_ERR_NOT_FOUND, "synthetic");
  CHECK_ERROR(kiln_transform_create(rt, "normalize", NULL, 0, &transform), KILN_ERR_NOT_FOUND, "normalize");
  CHECK(!optimizer && !schedule && !source && !transform);
  kiln_tensor_release(p);
}

/* Each object does its job with its plugin unloaded. */
static void still_working(kiln_runtime* rt, const objects* o) {
  const kiln_op* sum = NULL;
  kiln_tensor* loss = NULL;
  kiln_example *ex = NULL, *batch = NULL;
  kiln_tensor* input = NULL;
  float value = 0.0f, before[4] = {0}, after[4] = {0};
  double rate = 0.0;
  int64_t batches = 0;
  int i, normalized = 1;

  /* SGD: p - lr * grad, with grad 1 from sum(p). */
  CHECK_OK(kiln_op_find(rt, "sum", &sum));
  CHECK_OK(kiln_op_call1(rt, sum, (kiln_tensor* const*)&o->param, 1, NULL, 0, &loss));
  CHECK_OK(kiln_backward(rt, loss, NULL, 0));
  CHECK_OK(kiln_optimizer_step(o->optimizer));
  CHECK_OK(kiln_tensor_read(o->param, &value, sizeof value));
  CHECK(value == 0.5f);
  kiln_tensor_release(loss);

  /* step: gamma 0.1 every 2 steps. */
  CHECK_OK(kiln_lr_schedule_lr(o->schedule, 3, 1.0, &rate));
  CHECK(rate > 0.099 && rate < 0.101);

  /* normalize: (x - 0.5) / 0.25 of the source's example. */
  CHECK_OK(kiln_data_source_get(o->source, 1, &ex));
  CHECK_OK(kiln_example_get(ex, "input", &input));
  CHECK_OK(kiln_tensor_read(input, before, sizeof before));
  kiln_tensor_release(input);
  input = NULL;
  CHECK_OK(kiln_transform_apply(o->transform, ex, 0));
  CHECK_OK(kiln_example_get(ex, "input", &input));
  CHECK_OK(kiln_tensor_read(input, after, sizeof after));
  for (i = 0; i < 4; ++i) normalized = normalized && after[i] == (before[i] - 0.5f) / 0.25f;
  CHECK(normalized);
  kiln_tensor_release(input);
  kiln_example_release(ex);

  /* The loader's worker runs the source and the transform: a whole epoch. */
  CHECK_OK(kiln_loader_start_epoch(o->loader, 0));
  for (;;) {
    CHECK_OK(kiln_loader_next(o->loader, &batch));
    if (!batch) break;
    ++batches;
    kiln_example_release(batch);
    batch = NULL;
  }
  CHECK(batches == 3);
}

int main(void) {
  kiln_runtime* rt = bare_runtime();
  objects o = {0};

  CHECK_OK(kiln_plugin_load(rt, OPTIM_PLUGIN));
  CHECK_OK(kiln_plugin_load(rt, DATA_PLUGIN));
  create_objects(rt, &o);
  if (!o.loader) return check_report("plugins/loader/unload_kinds");

  CHECK_OK(kiln_plugin_unload(rt, "kiln-optim"));
  CHECK_OK(kiln_plugin_unload(rt, "kiln-data"));
  CHECK(plugin_count(rt) == 0);
  refused_after_unload(rt);
  CHECK(mapped(OPTIM_PLUGIN) && mapped(DATA_PLUGIN));
  still_working(rt, &o);

  /* The optimizer and the schedule were the last of kiln-optim's objects. */
  kiln_optimizer_release(o.optimizer);
  CHECK(mapped(OPTIM_PLUGIN));
  kiln_lr_schedule_release(o.schedule);
  CHECK(!mapped(OPTIM_PLUGIN));
  /* The loader holds the source and the transform. */
  kiln_data_source_release(o.source);
  kiln_transform_release(o.transform);
  CHECK(mapped(DATA_PLUGIN));
  kiln_loader_release(o.loader);
  CHECK(!mapped(DATA_PLUGIN));

  kiln_tensor_release(o.param);
  check_runtime_works(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/loader/unload_kinds");
}
