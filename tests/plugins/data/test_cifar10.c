/* The "cifar10" data source: binary batches of 1 label byte + 3072 pixels. */
#include "data_test.h"

enum { RECORD = 3073 };

/* `n` records; record r has label r % 10 and pixels (r + i) % 256. */
static unsigned char* batch(size_t n) {
  unsigned char* bytes = malloc(n * RECORD);
  size_t r, i;
  for (r = 0; r < n; ++r) {
    bytes[r * RECORD] = (unsigned char)(r % 10);
    for (i = 1; i < RECORD; ++i) bytes[r * RECORD + i] = (unsigned char)((r + i - 1) % 256);
  }
  return bytes;
}

static kiln_status open_cifar(kiln_runtime* rt, const char* files, kiln_data_source** out) {
  const kiln_attr config[1] = {kiln_attr_string("files", files)};
  return kiln_data_source_create(rt, "cifar10", config, 1, out);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  kiln_data_source* src = NULL;
  unsigned char* three = batch(3);
  unsigned char pixels[3072];
  char files[2200];
  int64_t length = 0;
  kiln_tensor_desc desc;
  const int64_t dims[3] = {3, 32, 32};
  int i, exact = 1;

  write_file(temp_path("batch_1.bin"), three, 3 * RECORD);
  write_file(temp_path("batch_2.bin"), three, 2 * RECORD);
  snprintf(files, sizeof files, "%s:%s", temp_path("batch_1.bin"), temp_path("batch_2.bin"));
  CHECK_OK(open_cifar(rt, files, &src));
  if (src) {
    CHECK_OK(kiln_data_source_length(src, &length));
    CHECK(length == 5);
    /* Example 4 is record 1 of the second batch. */
    read_example_field(src, 4, "input", &desc, pixels, sizeof pixels);
    CHECK(desc_is(&desc, KILN_U8, 3, dims));
    for (i = 0; i < 3072; ++i) exact = exact && pixels[i] == (unsigned char)((1 + i) % 256);
    CHECK(exact);
    CHECK(example_target(src, 4) == 1);
    CHECK(example_target(src, 2) == 2);
    kiln_data_source_release(src);
    src = NULL;
  }

  write_file(temp_path("truncated.bin"), three, 2 * RECORD - 5);
  CHECK_ERROR(open_cifar(rt, temp_path("truncated.bin"), &src), KILN_ERR_IO, "truncated.bin", "6141 bytes",
              "not a positive multiple of 3073");
  /* A bad batch after a good one fails the whole source, naming the bad one. */
  snprintf(files, sizeof files, "%s:%s", temp_path("batch_1.bin"), temp_path("truncated.bin"));
  CHECK_ERROR(open_cifar(rt, files, &src), KILN_ERR_IO, "CIFAR-10 batch", "truncated.bin", "6141 bytes");
  three[RECORD] = 200; /* a label outside 0..9 */
  write_file(temp_path("corrupt.bin"), three, 3 * RECORD);
  CHECK_ERROR(open_cifar(rt, temp_path("corrupt.bin"), &src), KILN_ERR_IO, "corrupt.bin", "is corrupt",
              "record 1 has label 200", "expected 0..9");
  write_file(temp_path("empty.bin"), three, 0);
  CHECK_ERROR(open_cifar(rt, temp_path("empty.bin"), &src), KILN_ERR_IO, "empty.bin", "holds 0 bytes");
  CHECK_ERROR(open_cifar(rt, temp_path("missing.bin"), &src), KILN_ERR_IO, "cannot open", "missing.bin");
  CHECK_ERROR(open_cifar(rt, "", &src), KILN_ERR_INVALID_ARGUMENT, "'files' is empty");
  CHECK(src == NULL);
  free(three);
  kiln_runtime_release(rt);
  return check_report("plugins/data/cifar10");
}
