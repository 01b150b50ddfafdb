/* Promise 22 on the CPU: under RLIMIT_AS, a too-large allocation in a
 * tensor, in an op, in a loader's batch and in a checkpoint load each fails
 * with kiln's out-of-memory error, and the runtime keeps working: a small
 * op afterwards gives the right answer, and the failed load changed nothing. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"
#include "kiln/kiln_training.h"

static const int64_t kHeadroom = 128ll << 20; /* address space granted beyond what is mapped now */

static void limit_address_space(void) {
  long pages = 0;
  struct rlimit limit;
  FILE* statm = fopen("/proc/self/statm", "r");
  CHECK(statm && fscanf(statm, "%ld", &pages) == 1);
  if (statm) fclose(statm);
  limit.rlim_cur = limit.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (rlim_t)kHeadroom;
  CHECK(setrlimit(RLIMIT_AS, &limit) == 0);
}

static kiln_module* make_linear(kiln_runtime* rt, int64_t in, int64_t out) {
  const kiln_attr config[2] = {kiln_attr_int("in_features", in), kiln_attr_int("out_features", out)};
  kiln_module* m = NULL;
  CHECK_OK(kiln_module_create(rt, "Linear", config, 2, &m));
  return m;
}

/* 1 + 2 computed by the runtime; 3 when it still works. */
static double small_sum(kiln_runtime* rt) {
  const int64_t one[1] = {1};
  const kiln_op* add = NULL;
  kiln_tensor *a = NULL, *b = NULL, *c = NULL;
  kiln_tensor* inputs[2];
  float value = -1.0f;
  CHECK_OK(kiln_tensor_full(rt, one, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &a));
  CHECK_OK(kiln_tensor_full(rt, one, 1, 2.0, KILN_F32, KILN_DEVICE_CPU, 0, &b));
  CHECK_OK(kiln_op_find(rt, "add", &add));
  inputs[0] = a;
  inputs[1] = b;
  if (a && b && add && kiln_op_call1(rt, add, inputs, 2, NULL, 0, &c) == KILN_OK)
    CHECK_OK(kiln_tensor_read(c, &value, sizeof value));
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  kiln_tensor_release(c);
  return value;
}

static void test_tensor_and_op(kiln_runtime* rt) {
  const int64_t huge[2] = {16384, 16384}, column[2] = {16384, 1}, row[2] = {1, 16384};
  const kiln_op* matmul = NULL;
  kiln_tensor *t = NULL, *a = NULL, *b = NULL, *product = NULL;
  kiln_tensor* inputs[2];
  CHECK_ERROR(kiln_tensor_empty(rt, huge, 2, KILN_F32, KILN_DEVICE_CPU, 0, &t), KILN_ERR_OUT_OF_MEMORY,
              "out of memory");
  CHECK(t == NULL);
  CHECK(small_sum(rt) == 3.0);
  /* The inputs are small; the product's 1 GiB output is not. */
  CHECK_OK(kiln_tensor_full(rt, column, 2, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &a));
  CHECK_OK(kiln_tensor_full(rt, row, 2, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &b));
  CHECK_OK(kiln_op_find(rt, "matmul", &matmul));
  inputs[0] = a;
  inputs[1] = b;
  if (a && b && matmul)
    CHECK_ERROR(kiln_op_call1(rt, matmul, inputs, 2, NULL, 0, &product), KILN_ERR_OUT_OF_MEMORY, "out of memory");
  CHECK(product == NULL);
  kiln_tensor_release(a);
  kiln_tensor_release(b);
  CHECK(small_sum(rt) == 3.0);
}

static void test_loader(kiln_runtime* rt) {
  /* Each example is 16 MiB; a batch of 64 needs 1 GiB. */
  const int64_t item[2] = {2048, 2048};
  const kiln_attr config[2] = {kiln_attr_int("length", 64), kiln_attr_ints("shape", item, 2)};
  kiln_data_source* source = NULL;
  kiln_loader* loader = NULL;
  kiln_loader_options o;
  kiln_example* batch = NULL;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.batch_size = 64;
  o.device = KILN_DEVICE_CPU;
  CHECK_OK(kiln_data_source_create(rt, "synthetic", config, 2, &source));
  if (source) CHECK_OK(kiln_loader_create(source, NULL, 0, &o, &loader));
  if (loader) {
    CHECK_OK(kiln_loader_start_epoch(loader, 0));
    CHECK_ERROR(kiln_loader_next(loader, &batch), KILN_ERR_OUT_OF_MEMORY, "out of memory");
    CHECK(batch == NULL);
  }
  kiln_loader_release(loader);
  kiln_data_source_release(source);
  CHECK(small_sum(rt) == 3.0);
}

/* Weights of 192 MiB saved before the limit; loading them needs more than
 * the headroom, fails, and leaves the model's own weights as they were. */
static void test_checkpoint_load(kiln_runtime* rt, kiln_module* target, const char* path) {
  kiln_tensor* weight = NULL;
  const char* name = NULL;
  void* data = NULL;
  float before = 0.0f, after = 1.0f;
  CHECK_OK(kiln_module_parameter(target, 0, &name, &weight));
  if (weight) CHECK_OK(kiln_tensor_data(weight, &data));
  if (data) memcpy(&before, data, sizeof before);
  CHECK_ERROR(kiln_weights_load(target, path, 1), KILN_ERR_OUT_OF_MEMORY, "out of memory");
  if (data) memcpy(&after, data, sizeof after);
  CHECK(before == after);
  kiln_tensor_release(weight);
  CHECK(small_sum(rt) == 3.0);
}

int main(void) {
  char path[512];
  kiln_runtime* rt = NULL;
  kiln_runtime_options o;
  kiln_module *saved, *target;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.num_threads = 2;
  CHECK_OK(kiln_runtime_create(&o, &rt));
  if (!rt) return check_report("reliability/cpu_out_of_memory");
  snprintf(path, sizeof path, "%s/kiln-oom-%d.safetensors", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
           (int)getpid());
  saved = make_linear(rt, 10240, 4915); /* 4915 x 10240 f32: 192 MiB */
  if (saved) CHECK_OK(kiln_weights_save(saved, path));
  kiln_module_release(saved);
  target = make_linear(rt, 10240, 4915);
  CHECK(small_sum(rt) == 3.0); /* warm: the pool and the op table exist before the limit */

  limit_address_space();
  test_tensor_and_op(rt);
  test_loader(rt);
  if (target) test_checkpoint_load(rt, target, path);

  kiln_module_release(target);
  kiln_runtime_release(rt);
  unlink(path);
  return check_report("reliability/cpu_out_of_memory");
}
