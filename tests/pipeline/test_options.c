/* Bad options and misuse fail with a message that says what was expected. */
#include "pipeline_test.h"

static void check_refused(kiln_data_source* src, const kiln_loader_options* o, kiln_status status,
                          const char* text) {
  kiln_loader* loader = NULL;
  CHECK_ERROR(kiln_loader_create(src, NULL, 0, o, &loader), status, "kiln_loader_create", text);
  CHECK(loader == NULL);
}

/* The CUDA device: refused with the runtime's reason without a usable GPU,
 * delivered there with one. */
static void check_cuda_device(kiln_data_source* src) {
  kiln_loader_options o = loader_options(4, 1);
  kiln_loader* loader = NULL;
  kiln_status status;
  o.device = KILN_DEVICE_CUDA;
  status = kiln_loader_create(src, NULL, 0, &o, &loader);
  if (status != KILN_OK) {
    CHECK_ERROR(status, KILN_ERR_DEVICE_MISMATCH, "cuda:0");
    CHECK(loader == NULL);
    return;
  }
  {
    kiln_example* batch = NULL;
    kiln_tensor* input = NULL;
    kiln_device_type type = KILN_DEVICE_CPU;
    int index = -1;
    int64_t values[4];
    CHECK_OK(kiln_loader_start_epoch(loader, 0));
    CHECK_OK(kiln_loader_next(loader, &batch));
    if (batch) CHECK_OK(kiln_example_get(batch, "input", &input));
    if (input) {
      CHECK_OK(kiln_tensor_device(input, &type, &index));
      CHECK(type == KILN_DEVICE_CUDA && index == 0);
      CHECK_OK(kiln_tensor_read(input, values, sizeof values));
      CHECK(values[0] == 0 && values[3] == 3);
    }
    kiln_tensor_release(input);
    kiln_example_release(batch);
    kiln_loader_release(loader);
  }
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = index_source(rt, 10);
  kiln_loader* loader = NULL;
  kiln_example* batch = NULL;
  kiln_loader_options o = loader_options(0, 0);
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "batch_size is 0; expected > 0");
  o = loader_options(2, 0);
  o.rank = 3;
  o.world_size = 3;
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "rank is 3 with world_size 3; expected 0 <= rank < world_size");
  o.rank = -1;
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "rank is -1");
  o = loader_options(2, 0);
  o.rank = 1; /* world_size 0: one process, rank 0 only */
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "rank is 1 with world_size 1");
  o = loader_options(2, -1);
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "num_workers is -1; expected >= 0");
  o = loader_options(2, 1);
  o.prefetch = -2;
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "prefetch is -2; expected >= 0");
  o = loader_options(2, 1);
  o.size = 0;
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "set it to sizeof(kiln_loader_options)");
  o = loader_options(2, 1);
  o.device = (kiln_device_type)7;
  check_refused(src, &o, KILN_ERR_INVALID_ARGUMENT, "unknown device type value 7");
  o = loader_options(2, 1);
  CHECK_ERROR(kiln_loader_create(NULL, NULL, 0, &o, &loader), KILN_ERR_INVALID_ARGUMENT, "argument 'source' is NULL");
  CHECK_ERROR(kiln_loader_create(src, NULL, 0, NULL, &loader), KILN_ERR_INVALID_ARGUMENT, "argument 'options' is NULL");
  CHECK_ERROR(kiln_loader_create(src, NULL, 1, &o, &loader), KILN_ERR_INVALID_ARGUMENT,
              "argument 'transforms' is NULL");
  {
    kiln_transform* none[1] = {NULL};
    CHECK_ERROR(kiln_loader_create(src, none, 1, &o, &loader), KILN_ERR_INVALID_ARGUMENT, "transforms[0] is NULL");
  }
  CHECK(loader == NULL);
  check_cuda_device(src);

  loader = open_loader(src, NULL, 0, &o);
  CHECK_ERROR(kiln_loader_next(loader, &batch), KILN_ERR_INVALID_STATE, "no epoch has been started");
  CHECK_ERROR(kiln_loader_start_epoch(loader, -1), KILN_ERR_INVALID_ARGUMENT, "epoch is -1");
  CHECK_ERROR(kiln_loader_next(loader, NULL), KILN_ERR_INVALID_ARGUMENT, "argument 'out' is NULL");
  CHECK_ERROR(kiln_loader_stats_get(loader, NULL), KILN_ERR_INVALID_ARGUMENT, "argument 'out' is NULL");
  CHECK_ERROR(kiln_loader_length(NULL, NULL, NULL), KILN_ERR_INVALID_ARGUMENT, "argument 'loader' is NULL");
  kiln_loader_retain(loader);
  kiln_loader_release(loader); /* still one reference */
  CHECK_OK(kiln_loader_start_epoch(loader, 0));
  CHECK_OK(kiln_loader_next(loader, &batch));
  CHECK(batch != NULL);
  kiln_example_release(batch);
  kiln_loader_release(loader);
  kiln_loader_release(NULL);
  kiln_data_source_release(src);
  kiln_runtime_release(rt);
  return check_report("pipeline/options");
}
