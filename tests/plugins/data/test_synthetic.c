/* The "synthetic" data source: examples are a function of (seed, index). */
#include "data_test.h"

enum { N = 2 * 3 * 5 };

static kiln_data_source* open_synthetic(kiln_runtime* rt, int64_t seed) {
  const int64_t shape[3] = {2, 3, 5};
  const kiln_attr config[4] = {kiln_attr_int("length", 100), kiln_attr_ints("shape", shape, 3),
                               kiln_attr_int("num_classes", 7), kiln_attr_int("seed", seed)};
  kiln_data_source* src = NULL;
  CHECK_OK(kiln_data_source_create(rt, "synthetic", config, 4, &src));
  return src;
}

static void input_of(const kiln_data_source* src, int64_t index, float* out) {
  kiln_tensor_desc desc;
  const int64_t dims[3] = {2, 3, 5};
  read_example_field(src, index, "input", &desc, out, N * sizeof(float));
  CHECK(desc_is(&desc, KILN_F32, 3, dims));
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source *a = open_synthetic(rt, 42), *b = open_synthetic(rt, 42), *other_seed = open_synthetic(rt, 43);
  float x[N], y[N];
  int64_t i, length = 0;
  int in_range = 1, classes_seen = 0, seen[7] = {0};
  if (!a || !b || !other_seed) return check_report("plugins/data/synthetic");

  CHECK_OK(kiln_data_source_length(a, &length));
  CHECK(length == 100);
  /* The same (seed, index) gives the same example from another source. */
  input_of(a, 17, x);
  input_of(b, 17, y);
  CHECK(memcmp(x, y, sizeof x) == 0);
  CHECK(example_target(a, 17) == example_target(b, 17));
  /* Other indices and other seeds give other examples. */
  input_of(a, 18, y);
  CHECK(memcmp(x, y, sizeof x) != 0);
  input_of(other_seed, 17, y);
  CHECK(memcmp(x, y, sizeof x) != 0);
  for (i = 0; i < N; ++i) in_range = in_range && x[i] >= 0.0f && x[i] < 1.0f;
  CHECK(in_range);
  for (i = 0; i < 100; ++i) {
    const int64_t t = example_target(a, i);
    CHECK(t >= 0 && t < 7);
    if (t >= 0 && t < 7 && !seen[t]++) ++classes_seen;
  }
  CHECK(classes_seen == 7);

  {
    const int64_t shape[1] = {3};
    const kiln_attr config[3] = {kiln_attr_int("length", 10), kiln_attr_ints("shape", shape, 1),
                                 kiln_attr_int("num_classes", 0)};
    kiln_data_source* bad = NULL;
    CHECK_ERROR(kiln_data_source_create(rt, "synthetic", config, 3, &bad), KILN_ERR_INVALID_ARGUMENT,
                "'num_classes' is 0");
    CHECK(bad == NULL);
  }
  kiln_data_source_release(a);
  kiln_data_source_release(b);
  kiln_data_source_release(other_seed);
  kiln_runtime_release(rt);
  return check_report("plugins/data/synthetic");
}
