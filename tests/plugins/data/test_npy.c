/* The "npy" data source: .npy v1/v2/v3 files of each dtype, and malformed
 * files each with its own message. */
#include "data_test.h"

/* Writes a .npy file of format `version` with the header dict `dict`
 * (padded as numpy pads it) followed by `n` bytes of `data`. */
static void write_npy(const char* path, int version, const char* dict, const void* data, size_t n) {
  unsigned char file[512];
  const size_t prefix = version == 1 ? 10 : 12;
  size_t header = strlen(dict) + 1, total;
  while ((prefix + header) % 64 != 0) ++header;
  memcpy(file, "\x93NUMPY", 6);
  file[6] = (unsigned char)version;
  file[7] = 0;
  file[8] = (unsigned char)(header & 0xFF);
  file[9] = (unsigned char)(header >> 8);
  if (version != 1) file[10] = file[11] = 0;
  memset(file + prefix, ' ', header);
  memcpy(file + prefix, dict, strlen(dict));
  file[prefix + header - 1] = '\n';
  total = prefix + header;
  memcpy(file + total, data, n);
  write_file(path, file, total + n);
}

static kiln_status open_npy(kiln_runtime* rt, const char* inputs, const char* targets, kiln_data_source** out) {
  const kiln_attr config[2] = {kiln_attr_string("inputs", inputs), kiln_attr_string("targets", targets)};
  return kiln_data_source_create(rt, "npy", config, targets ? 2 : 1, out);
}

/* Two examples of 2 elements each, of `descr`, stored as `stored`, read
 * back as `dtype` with the values of `data` (in host order). */
static void check_stored(kiln_runtime* rt, const char* descr, kiln_dtype dtype, const void* stored, const void* data,
                         size_t elem) {
  char dict[128];
  kiln_data_source* src = NULL;
  unsigned char got[16];
  kiln_tensor_desc desc;
  const int64_t dims[1] = {2};
  snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 2), }", descr);
  write_npy(temp_path("dtype.npy"), 1, dict, stored, 4 * elem);
  CHECK_OK(open_npy(rt, temp_path("dtype.npy"), NULL, &src));
  if (!src) return;
  read_example_field(src, 1, "input", &desc, got, 2 * elem);
  CHECK(desc_is(&desc, dtype, 1, dims));
  CHECK(memcmp(got, (const unsigned char*)data + 2 * elem, 2 * elem) == 0);
  kiln_data_source_release(src);
}

static void check_dtype(kiln_runtime* rt, const char* descr, kiln_dtype dtype, const void* data, size_t elem) {
  check_stored(rt, descr, dtype, data, data, elem);
}

/* `data`, 4 elements of `elem` bytes, stored most significant byte first
 * (the host is little-endian), reads back as the same values. */
static void check_big_endian(kiln_runtime* rt, const char* descr, kiln_dtype dtype, const void* data, size_t elem) {
  unsigned char stored[32];
  size_t i, b;
  for (i = 0; i < 4; ++i)
    for (b = 0; b < elem; ++b) stored[i * elem + b] = ((const unsigned char*)data)[i * elem + elem - 1 - b];
  check_stored(rt, descr, dtype, stored, data, elem);
}

static void test_dtypes(kiln_runtime* rt) {
  const float f4[4] = {1.5f, -2.0f, 3.25f, 4.0f};
  const double f8[4] = {0.1, 0.2, -0.3, 1e300};
  const int32_t i4[4] = {-1, 2, -3, 2000000000};
  const int64_t i8[4] = {5, -6, 7, -8000000000LL};
  const unsigned char u1[4] = {0, 255, 17, 3};
  const unsigned char b1[4] = {1, 0, 0, 1};
  check_dtype(rt, "<f4", KILN_F32, f4, 4);
  check_dtype(rt, "<f8", KILN_F64, f8, 8);
  check_dtype(rt, "<i4", KILN_I32, i4, 4);
  check_dtype(rt, "<i8", KILN_I64, i8, 8);
  check_dtype(rt, "|u1", KILN_U8, u1, 1);
  check_dtype(rt, "|b1", KILN_BOOL, b1, 1);
  /* Big-endian files are byte-swapped into host order. */
  check_big_endian(rt, ">f4", KILN_F32, f4, 4);
  check_big_endian(rt, ">f8", KILN_F64, f8, 8);
  check_big_endian(rt, ">i4", KILN_I32, i4, 4);
  check_big_endian(rt, ">i8", KILN_I64, i8, 8);
}

static void test_versions_and_targets(kiln_runtime* rt) {
  const float inputs[6] = {1, 2, 3, 4, 5, 6};
  const int64_t targets[3] = {4, 0, 2};
  const char* dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }";
  int version;
  for (version = 1; version <= 3; ++version) {
    kiln_data_source* src = NULL;
    float row[2];
    kiln_tensor_desc desc;
    int64_t length = 0;
    write_npy(temp_path("inputs.npy"), version, dict, inputs, sizeof inputs);
    write_npy(temp_path("targets.npy"), version, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }",
              targets, sizeof targets);
    CHECK_OK(open_npy(rt, temp_path("inputs.npy"), temp_path("targets.npy"), &src));
    if (!src) continue;
    CHECK_OK(kiln_data_source_length(src, &length));
    CHECK(length == 3);
    read_example_field(src, 2, "input", &desc, row, sizeof row);
    CHECK(row[0] == 5.0f && row[1] == 6.0f);
    CHECK(example_target(src, 0) == 4);
    CHECK(example_target(src, 2) == 2);
    kiln_data_source_release(src);
  }
}

static void test_bad_files(kiln_runtime* rt) {
  const float data[4] = {1, 2, 3, 4};
  const char* good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  kiln_data_source* src = NULL;

  write_npy(temp_path("truncated.npy"), 1, good, data, sizeof data - 1);
  CHECK_ERROR(open_npy(rt, temp_path("truncated.npy"), NULL, &src), KILN_ERR_IO, "truncated.npy", "is truncated",
              "f32[2,2]", "holds 15 bytes");
  write_npy(temp_path("no-shape.npy"), 1, "{'descr': '<f4', 'fortran_order': False, }", data, sizeof data);
  CHECK_ERROR(open_npy(rt, temp_path("no-shape.npy"), NULL, &src), KILN_ERR_IO, "no-shape.npy", "corrupt header",
              "no 'shape' entry");
  write_npy(temp_path("bad-shape.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 2], }", data,
            sizeof data);
  CHECK_ERROR(open_npy(rt, temp_path("bad-shape.npy"), NULL, &src), KILN_ERR_IO, "corrupt header", "not a tuple");
  write_text(temp_path("wrong-magic.npy"), "PK\x03\x04 this is a zip file, not an array");
  CHECK_ERROR(open_npy(rt, temp_path("wrong-magic.npy"), NULL, &src), KILN_ERR_IO, "wrong-magic.npy",
              "not an NPY file", "magic");
  write_npy(temp_path("fortran.npy"), 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", data,
            sizeof data);
  CHECK_ERROR(open_npy(rt, temp_path("fortran.npy"), NULL, &src), KILN_ERR_UNSUPPORTED, "fortran.npy",
              "is in Fortran order", "numpy.ascontiguousarray");
  write_npy(temp_path("complex.npy"), 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data, 8);
  CHECK_ERROR(open_npy(rt, temp_path("complex.npy"), NULL, &src), KILN_ERR_UNSUPPORTED, "'<c8'",
              "<f4 <f8 <i4 <i8 |u1 |b1", ">f4 >f8 >i4 >i8");
  /* '|' (no byte order) only for single bytes. */
  write_npy(temp_path("no-order.npy"), 1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 2), }", data,
            sizeof data);
  CHECK_ERROR(open_npy(rt, temp_path("no-order.npy"), NULL, &src), KILN_ERR_UNSUPPORTED, "no-order.npy", "'|f4'");
  write_npy(temp_path("v9.npy"), 1, good, data, sizeof data);
  {
    unsigned char bytes[128];
    FILE* f = fopen(temp_path("v9.npy"), "rb");
    const size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    bytes[6] = 9;
    write_file(temp_path("v9.npy"), bytes, n);
  }
  CHECK_ERROR(open_npy(rt, temp_path("v9.npy"), NULL, &src), KILN_ERR_UNSUPPORTED, "format version 9.0");
  CHECK_ERROR(open_npy(rt, temp_path("missing.npy"), NULL, &src), KILN_ERR_IO, "cannot open", "missing.npy");

  write_npy(temp_path("two.npy"), 1, good, data, sizeof data);
  write_npy(temp_path("three.npy"), 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", data, 3);
  CHECK_ERROR(open_npy(rt, temp_path("two.npy"), temp_path("three.npy"), &src), KILN_ERR_SHAPE_MISMATCH,
              "hold 2 examples", "hold 3");
  CHECK(src == NULL);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  test_dtypes(rt);
  test_versions_and_targets(rt);
  test_bad_files(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/data/npy");
}
