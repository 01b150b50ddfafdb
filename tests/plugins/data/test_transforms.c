/* Every transform against hand-computed values, determinism per seed,
 * variety across seeds, and bad input. */
#include <math.h>

#include "data_test.h"

static kiln_runtime* rt;

static kiln_transform* make_transform(const char* type, const kiln_attr* config, size_t n) {
  kiln_transform* tr = NULL;
  CHECK_OK(kiln_transform_create(rt, type, config, n, &tr));
  return tr;
}

/* A new example whose field `name` holds a copy of `data`. */
static kiln_example* example_with(const char* name, const void* data, size_t nbytes, const int64_t* shape, int rank,
                                  kiln_dtype dtype) {
  kiln_example* ex = NULL;
  kiln_tensor* t = NULL;
  CHECK_OK(kiln_example_create(rt, &ex));
  CHECK_OK(kiln_tensor_from_data(rt, data, nbytes, shape, rank, dtype, &t));
  CHECK_OK(kiln_example_set(ex, name, t));
  kiln_tensor_release(t);
  return ex;
}

static int close_to(float a, double b) { return fabs(a - b) <= 1e-6 + 1e-6 * fabs(b); }

static void test_to_float(void) {
  const unsigned char pixels[4] = {0, 51, 102, 255};
  const int64_t shape[2] = {2, 2};
  const kiln_attr config[1] = {kiln_attr_float("scale", 1.0 / 255.0)};
  kiln_transform* tr = make_transform("to_float", config, 1);
  kiln_example* ex = example_with("input", pixels, sizeof pixels, shape, 2, KILN_U8);
  float out[4];
  kiln_tensor_desc desc;
  CHECK_OK(kiln_transform_apply(tr, ex, 0));
  read_field(ex, "input", &desc, out, sizeof out);
  CHECK(desc_is(&desc, KILN_F32, 2, shape));
  CHECK(close_to(out[0], 0.0) && close_to(out[1], 0.2) && close_to(out[2], 0.4) && close_to(out[3], 1.0));
  kiln_example_release(ex);
  /* Another field, the default scale. */
  {
    const int64_t label = 3;
    const kiln_attr target_config[1] = {kiln_attr_string("field", "target")};
    kiln_transform* on_target = make_transform("to_float", target_config, 1);
    float value = 0;
    ex = example_with("target", &label, sizeof label, NULL, 0, KILN_I64);
    CHECK_OK(kiln_transform_apply(on_target, ex, 0));
    read_field(ex, "target", &desc, &value, sizeof value);
    CHECK(desc.dtype == KILN_F32 && value == 3.0f);
    CHECK_ERROR(kiln_transform_apply(tr, ex, 0), KILN_ERR_NOT_FOUND, "transform 'to_float'", "no field 'input'");
    kiln_example_release(ex);
    kiln_transform_release(on_target);
  }
  kiln_transform_release(tr);
}

static void test_normalize(void) {
  const float x[4] = {1, 2, 3, 4};
  const int64_t chw[3] = {2, 1, 2}, three_channels[3] = {3, 1, 2};
  const double mean[2] = {1, 3}, std[2] = {2, 0.5}, one_mean[1] = {1}, one_std[1] = {2}, zero[2] = {1, 0};
  const kiln_attr per_channel[2] = {kiln_attr_floats("mean", mean, 2), kiln_attr_floats("std", std, 2)};
  const kiln_attr single[2] = {kiln_attr_floats("mean", one_mean, 1), kiln_attr_floats("std", one_std, 1)};
  kiln_transform *tr = make_transform("normalize", per_channel, 2), *all = make_transform("normalize", single, 2);
  kiln_transform* bad = NULL;
  kiln_example* ex = example_with("input", x, sizeof x, chw, 3, KILN_F32);
  float out[6];
  kiln_tensor_desc desc;
  CHECK_OK(kiln_transform_apply(tr, ex, 0));
  read_field(ex, "input", &desc, out, 4 * sizeof(float));
  CHECK(out[0] == 0.0f && out[1] == 0.5f && out[2] == 0.0f && out[3] == 2.0f);
  kiln_example_release(ex);

  ex = example_with("input", x, sizeof x, chw, 3, KILN_F32);
  CHECK_OK(kiln_transform_apply(all, ex, 0));
  read_field(ex, "input", &desc, out, 4 * sizeof(float));
  CHECK(out[0] == 0.0f && out[1] == 0.5f && out[2] == 1.0f && out[3] == 1.5f);
  kiln_example_release(ex);

  {
    const float six[6] = {0};
    const unsigned char bytes[4] = {0};
    ex = example_with("input", six, sizeof six, three_channels, 3, KILN_F32);
    CHECK_ERROR(kiln_transform_apply(tr, ex, 0), KILN_ERR_SHAPE_MISMATCH, "have 2 values (one per channel)",
                "[3,1,2]", "C = 2");
    kiln_example_release(ex);
    ex = example_with("input", bytes, sizeof bytes, chw, 3, KILN_U8);
    CHECK_ERROR(kiln_transform_apply(tr, ex, 0), KILN_ERR_DTYPE_MISMATCH, "u8[2,1,2]", "apply to_float first");
    kiln_example_release(ex);
  }
  {
    const kiln_attr uneven[2] = {kiln_attr_floats("mean", mean, 2), kiln_attr_floats("std", one_std, 1)};
    const kiln_attr zero_std[2] = {kiln_attr_floats("mean", mean, 2), kiln_attr_floats("std", zero, 2)};
    CHECK_ERROR(kiln_transform_create(rt, "normalize", uneven, 2, &bad), KILN_ERR_INVALID_ARGUMENT,
                "'mean' has 2 values and 'std' 1");
    CHECK_ERROR(kiln_transform_create(rt, "normalize", zero_std, 2, &bad), KILN_ERR_INVALID_ARGUMENT,
                "'std' value 1 is 0");
    CHECK(bad == NULL);
  }
  kiln_transform_release(tr);
  kiln_transform_release(all);
}

/* The 3x3 window at (top, left) of the 3x3 image 1..9 padded by 1 with 0. */
static void padded_window(int top, int left, unsigned char* out) {
  int y, x;
  for (y = 0; y < 3; ++y)
    for (x = 0; x < 3; ++x) {
      const int sy = top + y - 1, sx = left + x - 1;
      out[3 * y + x] = (sy >= 0 && sy < 3 && sx >= 0 && sx < 3) ? (unsigned char)(3 * sy + sx + 1) : 0;
    }
}

static void crop(kiln_transform* tr, uint64_t seed, unsigned char* out) {
  const unsigned char image[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const int64_t shape[3] = {1, 3, 3};
  kiln_example* ex = example_with("input", image, sizeof image, shape, 3, KILN_U8);
  kiln_tensor_desc desc;
  CHECK_OK(kiln_transform_apply(tr, ex, seed));
  read_field(ex, "input", &desc, out, 9);
  CHECK(desc_is(&desc, KILN_U8, 3, shape));
  kiln_example_release(ex);
}

static void test_random_crop(void) {
  const int64_t size[1] = {3};
  const kiln_attr config[2] = {kiln_attr_ints("size", size, 1), kiln_attr_int("padding", 1)};
  kiln_transform* tr = make_transform("random_crop", config, 2);
  int positions_seen[9] = {0}, distinct = 0, all_windows = 1;
  uint64_t seed;
  for (seed = 0; seed < 64; ++seed) {
    unsigned char got[9], again[9], window[9];
    int position, found = -1;
    crop(tr, seed, got);
    crop(tr, seed, again);
    CHECK(memcmp(got, again, 9) == 0); /* the same seed, the same crop */
    for (position = 0; position < 9 && found < 0; ++position) {
      padded_window(position / 3, position % 3, window);
      if (memcmp(got, window, 9) == 0) found = position;
    }
    all_windows = all_windows && found >= 0;
    if (found >= 0 && !positions_seen[found]++) ++distinct;
  }
  CHECK(all_windows);
  CHECK(distinct >= 5);

  /* A rectangular crop without padding keeps the window the same across channels. */
  {
    const int64_t rect[2] = {2, 3}, shape[3] = {2, 4, 4}, out_shape[3] = {2, 2, 3};
    const kiln_attr rect_config[1] = {kiln_attr_ints("size", rect, 2)};
    kiln_transform* rc = make_transform("random_crop", rect_config, 1);
    float image[32], out[12];
    kiln_example* ex;
    kiln_tensor_desc desc;
    int i, consistent;
    for (i = 0; i < 32; ++i) image[i] = (float)i;
    ex = example_with("input", image, sizeof image, shape, 3, KILN_F32);
    CHECK_OK(kiln_transform_apply(rc, ex, 5));
    read_field(ex, "input", &desc, out, sizeof out);
    CHECK(desc_is(&desc, KILN_F32, 3, out_shape));
    consistent = out[1] == out[0] + 1 && out[3] == out[0] + 4 && out[6] == out[0] + 16;
    CHECK(consistent);
    kiln_example_release(ex);
    kiln_transform_release(rc);
  }
  {
    const int64_t big[1] = {5};
    const kiln_attr big_config[1] = {kiln_attr_ints("size", big, 1)};
    kiln_transform* too_big = make_transform("random_crop", big_config, 1);
    const unsigned char image[9] = {0};
    const int64_t shape[2] = {3, 3};
    kiln_example* ex = example_with("input", image, sizeof image, shape, 2, KILN_U8);
    CHECK_ERROR(kiln_transform_apply(too_big, ex, 0), KILN_ERR_SHAPE_MISMATCH, "a 5x5 crop does not fit",
                "[3,3] padded by 0");
    kiln_example_release(ex);
    kiln_transform_release(too_big);
  }
  kiln_transform_release(tr);
}

/* Applies random_hflip(p) with `seed` to [[1,2,3],[4,5,6]]; returns 1 when
 * the result is the mirror image, 0 when unchanged, -1 otherwise. */
static int flipped(kiln_transform* tr, uint64_t seed) {
  const int32_t rows[6] = {1, 2, 3, 4, 5, 6}, mirror[6] = {3, 2, 1, 6, 5, 4};
  const int64_t shape[2] = {2, 3};
  kiln_example* ex = example_with("input", rows, sizeof rows, shape, 2, KILN_I32);
  int32_t out[6];
  kiln_tensor_desc desc;
  int result = -1;
  CHECK_OK(kiln_transform_apply(tr, ex, seed));
  read_field(ex, "input", &desc, out, sizeof out);
  if (memcmp(out, rows, sizeof out) == 0) result = 0;
  if (memcmp(out, mirror, sizeof out) == 0) result = 1;
  kiln_example_release(ex);
  return result;
}

static void test_random_hflip(void) {
  const kiln_attr half[1] = {kiln_attr_float("p", 0.5)}, always[1] = {kiln_attr_float("p", 1.0)},
                  never[1] = {kiln_attr_float("p", 0.0)}, bad_p[1] = {kiln_attr_float("p", 1.5)};
  kiln_transform *tr = make_transform("random_hflip", half, 1), *yes = make_transform("random_hflip", always, 1),
                 *no = make_transform("random_hflip", never, 1), *bad = NULL;
  int outcomes[2] = {0, 0}, deterministic = 1;
  uint64_t seed;
  for (seed = 0; seed < 64; ++seed) {
    const int first = flipped(tr, seed);
    CHECK(first >= 0);
    deterministic = deterministic && flipped(tr, seed) == first;
    if (first >= 0) ++outcomes[first];
    CHECK(flipped(yes, seed) == 1);
    CHECK(flipped(no, seed) == 0);
  }
  CHECK(deterministic);
  CHECK(outcomes[0] > 0 && outcomes[1] > 0);
  CHECK_ERROR(kiln_transform_create(rt, "random_hflip", bad_p, 1, &bad), KILN_ERR_INVALID_ARGUMENT, "'p' is 1.5",
              "[0, 1]");
  CHECK(bad == NULL);
  kiln_transform_release(tr);
  kiln_transform_release(yes);
  kiln_transform_release(no);
}

static void test_one_hot(void) {
  const kiln_attr config[1] = {kiln_attr_int("num_classes", 5)};
  kiln_transform* tr = make_transform("one_hot", config, 1);
  const int64_t label = 3, too_big = 7, negative = -1;
  const int64_t out_shape[1] = {5};
  kiln_example* ex = example_with("target", &label, sizeof label, NULL, 0, KILN_I64);
  float out[5];
  kiln_tensor_desc desc;
  CHECK_OK(kiln_transform_apply(tr, ex, 0));
  read_field(ex, "target", &desc, out, sizeof out);
  CHECK(desc_is(&desc, KILN_F32, 1, out_shape));
  CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == 1 && out[4] == 0);
  kiln_example_release(ex);
  ex = example_with("target", &too_big, sizeof too_big, NULL, 0, KILN_I64);
  CHECK_ERROR(kiln_transform_apply(tr, ex, 0), KILN_ERR_INVALID_ARGUMENT, "index 7", "outside [0, 5)");
  kiln_example_release(ex);
  ex = example_with("target", &negative, sizeof negative, NULL, 0, KILN_I64);
  CHECK_ERROR(kiln_transform_apply(tr, ex, 0), KILN_ERR_INVALID_ARGUMENT, "index -1", "outside [0, 5)");
  kiln_example_release(ex);
  {
    const float not_an_index = 1.0f;
    ex = example_with("target", &not_an_index, sizeof not_an_index, NULL, 0, KILN_F32);
    CHECK_ERROR(kiln_transform_apply(tr, ex, 0), KILN_ERR_DTYPE_MISMATCH, "is f32", "expected class indices");
    kiln_example_release(ex);
  }
  kiln_transform_release(tr);
  {
    kiln_transform* bad = NULL;
    CHECK_ERROR(kiln_transform_create(rt, "one_hot", NULL, 0, &bad), KILN_ERR_INVALID_ARGUMENT, "num_classes");
    CHECK_ERROR(kiln_transform_create(rt, "no-such-transform", NULL, 0, &bad), KILN_ERR_NOT_FOUND,
                "no-such-transform");
    CHECK(bad == NULL);
  }
}

int main(void) {
  rt = open_runtime();
  test_to_float();
  test_normalize();
  test_random_crop();
  test_random_hflip();
  test_one_hot();
  kiln_runtime_release(rt);
  return check_report("plugins/data/transforms");
}
