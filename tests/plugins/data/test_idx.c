/* The "idx" data source: plain and gzip IDX files (of one or several gzip
 * members), item shapes and types, and each malformed file with its own
 * message. */
#include "data_test.h"

/* An IDX header for `rank` dims of type `code` into `out`; returns its size. */
static size_t idx_header(unsigned char* out, unsigned char code, int rank, const uint32_t* dims) {
  int d;
  out[0] = 0;
  out[1] = 0;
  out[2] = code;
  out[3] = (unsigned char)rank;
  for (d = 0; d < rank; ++d) {
    out[4 + 4 * d] = (unsigned char)(dims[d] >> 24);
    out[5 + 4 * d] = (unsigned char)(dims[d] >> 16);
    out[6 + 4 * d] = (unsigned char)(dims[d] >> 8);
    out[7 + 4 * d] = (unsigned char)dims[d];
  }
  return 4 + 4 * (size_t)rank;
}

/* Three 2x2 u8 images with pixels 10*i + j, and labels 7, 0, 9. */
static size_t images_file(unsigned char* out) {
  const uint32_t dims[3] = {3, 2, 2};
  size_t n = idx_header(out, 0x08, 3, dims);
  int i, j;
  for (i = 0; i < 3; ++i)
    for (j = 0; j < 4; ++j) out[n++] = (unsigned char)(10 * i + j);
  return n;
}

static size_t labels_file(unsigned char* out) {
  const uint32_t dims[1] = {3};
  size_t n = idx_header(out, 0x08, 1, dims);
  out[n++] = 7;
  out[n++] = 0;
  out[n++] = 9;
  return n;
}

/* Up to `cap` bytes of the file `path` into `out`; returns how many. */
static size_t read_back(const char* path, unsigned char* out, size_t cap) {
  size_t n = 0;
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return 0;
  n = fread(out, 1, cap, f);
  fclose(f);
  return n;
}

static kiln_status open_idx(kiln_runtime* rt, const char* images, const char* labels, kiln_data_source** out) {
  const kiln_attr config[2] = {kiln_attr_string("images", images), kiln_attr_string("labels", labels)};
  return kiln_data_source_create(rt, "idx", config, 2, out);
}

static void check_reads_back(kiln_runtime* rt, const char* images, const char* labels) {
  kiln_data_source* src = NULL;
  int64_t length = 0;
  unsigned char pixels[4];
  kiln_tensor_desc desc;
  const int64_t dims[2] = {2, 2};
  CHECK_OK(open_idx(rt, images, labels, &src));
  if (!src) return;
  CHECK_OK(kiln_data_source_length(src, &length));
  CHECK(length == 3);
  read_example_field(src, 2, "input", &desc, pixels, sizeof pixels);
  CHECK(desc_is(&desc, KILN_U8, 2, dims));
  CHECK(pixels[0] == 20 && pixels[1] == 21 && pixels[2] == 22 && pixels[3] == 23);
  CHECK(example_target(src, 0) == 7);
  CHECK(example_target(src, 1) == 0);
  CHECK(example_target(src, 2) == 9);
  kiln_data_source_release(src);
}

static void test_plain_and_gzip(kiln_runtime* rt) {
  unsigned char images[64], labels[16];
  const size_t n_images = images_file(images), n_labels = labels_file(labels);
  write_file(temp_path("images.idx"), images, n_images);
  write_file(temp_path("labels.idx"), labels, n_labels);
  check_reads_back(rt, temp_path("images.idx"), temp_path("labels.idx"));
  /* Compression is found by the gzip magic, not by the name. */
  write_gzip(temp_path("images-gz.idx"), images, n_images);
  write_gzip(temp_path("labels.idx.gz"), labels, n_labels);
  check_reads_back(rt, temp_path("images-gz.idx"), temp_path("labels.idx.gz"));
}

/* Two gzip files joined (`cat a.gz b.gz`) are one file, as gzip -d reads
 * them: the header and first image in one member, the rest in another. */
static void test_gzip_members(kiln_runtime* rt) {
  unsigned char images[64], joined[512];
  const size_t n_images = images_file(images), split = 16 + 4;
  size_t n;
  write_gzip(temp_path("first.gz"), images, split);
  write_gzip(temp_path("second.gz"), images + split, n_images - split);
  n = read_back(temp_path("first.gz"), joined, sizeof joined);
  n += read_back(temp_path("second.gz"), joined + n, sizeof joined - n);
  write_file(temp_path("members.idx.gz"), joined, n);
  check_reads_back(rt, temp_path("members.idx.gz"), temp_path("labels.idx"));
}

static void test_wide_types(kiln_runtime* rt) {
  /* i32 images, big-endian in the file: -5 and 70000. */
  const uint32_t dims[2] = {2, 1};
  unsigned char file[32];
  size_t n = idx_header(file, 0x0C, 2, dims);
  const unsigned char values[8] = {0xFF, 0xFF, 0xFF, 0xFB, 0x00, 0x01, 0x11, 0x70};
  const uint32_t label_dims[1] = {2};
  unsigned char labels[16];
  size_t n_labels = idx_header(labels, 0x08, 1, label_dims);
  kiln_data_source* src = NULL;
  int32_t value = 0;
  kiln_tensor_desc desc;
  const int64_t item[1] = {1};
  memcpy(file + n, values, sizeof values);
  n += sizeof values;
  labels[n_labels++] = 1;
  labels[n_labels++] = 2;
  write_file(temp_path("wide.idx"), file, n);
  write_file(temp_path("wide-labels.idx"), labels, n_labels);
  CHECK_OK(open_idx(rt, temp_path("wide.idx"), temp_path("wide-labels.idx"), &src));
  if (!src) return;
  read_example_field(src, 0, "input", &desc, &value, sizeof value);
  CHECK(desc_is(&desc, KILN_I32, 1, item));
  CHECK(value == -5);
  read_example_field(src, 1, "input", &desc, &value, sizeof value);
  CHECK(value == 70000);
  kiln_data_source_release(src);
}

static void test_bad_files(kiln_runtime* rt) {
  unsigned char images[64], garbage[40];
  const size_t n_images = images_file(images);
  const char* good_labels = temp_path("labels.idx");
  kiln_data_source* src = NULL;
  size_t i;

  write_file(temp_path("truncated.idx"), images, n_images - 1);
  CHECK_ERROR(open_idx(rt, temp_path("truncated.idx"), good_labels, &src), KILN_ERR_IO, "truncated.idx",
              "is truncated", "promises u8[3,2,2] = 12 bytes", "holds 11");
  write_file(temp_path("short-header.idx"), images, 9);
  CHECK_ERROR(open_idx(rt, temp_path("short-header.idx"), good_labels, &src), KILN_ERR_IO, "short-header.idx",
              "header needs 16");
  write_file(temp_path("trailing.idx"), images, n_images);
  {
    FILE* f = fopen(temp_path("trailing.idx"), "ab");
    fputc(0, f);
    fclose(f);
  }
  CHECK_ERROR(open_idx(rt, temp_path("trailing.idx"), good_labels, &src), KILN_ERR_IO, "1 more than its header");

  memcpy(garbage, images, n_images);
  garbage[0] = 0x12;
  garbage[1] = 0x34;
  write_file(temp_path("wrong-magic.idx"), garbage, n_images);
  CHECK_ERROR(open_idx(rt, temp_path("wrong-magic.idx"), good_labels, &src), KILN_ERR_IO, "wrong-magic.idx",
              "not an IDX file", "0x12340803", "0x00000803");
  memcpy(garbage, images, n_images);
  garbage[2] = 0x07; /* no such type code */
  write_file(temp_path("bad-type.idx"), garbage, n_images);
  CHECK_ERROR(open_idx(rt, temp_path("bad-type.idx"), good_labels, &src), KILN_ERR_IO, "0x00000703");

  /* A gzip magic followed by garbage. */
  garbage[0] = 0x1f;
  garbage[1] = 0x8b;
  for (i = 2; i < sizeof garbage; ++i) garbage[i] = (unsigned char)(i * 37);
  write_file(temp_path("corrupt.gz"), garbage, sizeof garbage);
  CHECK_ERROR(open_idx(rt, temp_path("corrupt.gz"), good_labels, &src), KILN_ERR_IO, "corrupt.gz",
              "corrupt gzip file");
  /* A gzip stream cut short, and one followed by bytes that are not another member. */
  write_gzip(temp_path("whole.gz"), images, n_images);
  {
    unsigned char whole[256];
    const size_t n = read_back(temp_path("whole.gz"), whole, sizeof whole - 3);
    write_file(temp_path("cut.gz"), whole, n - 12);
    memcpy(whole + n, "END", 3);
    write_file(temp_path("trailing.gz"), whole, n + 3);
  }
  CHECK_ERROR(open_idx(rt, temp_path("cut.gz"), good_labels, &src), KILN_ERR_IO, "cut.gz", "truncated gzip file");
  CHECK_ERROR(open_idx(rt, temp_path("trailing.gz"), good_labels, &src), KILN_ERR_IO, "trailing.gz",
              "3 bytes after the end of its gzip stream", "not another gzip member");

  CHECK_ERROR(open_idx(rt, temp_path("no-such-file.idx"), good_labels, &src), KILN_ERR_IO, "cannot open",
              "no-such-file.idx");

  /* Labels of another count, and labels that are images. */
  {
    const uint32_t dims[1] = {2};
    unsigned char two[16];
    size_t n = idx_header(two, 0x08, 1, dims);
    two[n++] = 1;
    two[n++] = 2;
    write_file(temp_path("two-labels.idx"), two, n);
  }
  write_file(temp_path("images.idx"), images, n_images);
  CHECK_ERROR(open_idx(rt, temp_path("images.idx"), temp_path("two-labels.idx"), &src), KILN_ERR_IO, "holds 3 items",
              "holds 2", "same number");
  CHECK_ERROR(open_idx(rt, temp_path("images.idx"), temp_path("images.idx"), &src), KILN_ERR_IO,
              "has shape [3,2,2]", "one dimension");
  CHECK(src == NULL);
}

/* No images, each of a size no tensor can have: the empty count is read
 * without overflowing, and the item shape is refused by name. */
static void test_empty_but_huge_items(kiln_runtime* rt) {
  const uint32_t image_dims[3] = {0, 0xFFFFFFFFu, 0xFFFFFFFFu}, label_dims[1] = {0};
  unsigned char images[16], labels[8];
  kiln_data_source* src = NULL;
  write_file(temp_path("huge-items.idx"), images, idx_header(images, 0x08, 3, image_dims));
  write_file(temp_path("no-labels.idx"), labels, idx_header(labels, 0x08, 1, label_dims));
  CHECK_ERROR(open_idx(rt, temp_path("huge-items.idx"), temp_path("no-labels.idx"), &src), KILN_ERR_INVALID_ARGUMENT,
              "[4294967295,4294967295]", "more than 2^63 elements");
  CHECK(src == NULL);
}

static void test_index_range(kiln_runtime* rt) {
  kiln_data_source* src = NULL;
  kiln_example* ex = NULL;
  CHECK_OK(open_idx(rt, temp_path("images.idx"), temp_path("labels.idx"), &src));
  if (!src) return;
  CHECK_ERROR(kiln_data_source_get(src, 3, &ex), KILN_ERR_INVALID_ARGUMENT, "index 3 is out of range",
              "has 3 examples");
  CHECK_ERROR(kiln_data_source_get(src, -1, &ex), KILN_ERR_INVALID_ARGUMENT, "index -1 is out of range");
  CHECK(ex == NULL);
  kiln_data_source_release(src);
}

/* `limit` keeps the first examples; more than the files hold keeps them all. */
static void test_limit(kiln_runtime* rt) {
  kiln_data_source* src = NULL;
  kiln_example* ex = NULL;
  int64_t length = 0;
  kiln_attr config[3];
  config[0] = kiln_attr_string("images", temp_path("images.idx"));
  config[1] = kiln_attr_string("labels", temp_path("labels.idx"));
  config[2] = kiln_attr_int("limit", 2);
  CHECK_OK(kiln_data_source_create(rt, "idx", config, 3, &src));
  if (!src) return;
  CHECK_OK(kiln_data_source_length(src, &length));
  CHECK(length == 2);
  CHECK(example_target(src, 0) == 7);
  CHECK(example_target(src, 1) == 0);
  CHECK_ERROR(kiln_data_source_get(src, 2, &ex), KILN_ERR_INVALID_ARGUMENT, "index 2 is out of range",
              "has 2 examples");
  kiln_data_source_release(src);
  src = NULL;

  config[2] = kiln_attr_int("limit", 10);
  CHECK_OK(kiln_data_source_create(rt, "idx", config, 3, &src));
  if (!src) return;
  CHECK_OK(kiln_data_source_length(src, &length));
  CHECK(length == 3);
  kiln_data_source_release(src);
  src = NULL;

  config[2] = kiln_attr_int("limit", -1);
  CHECK_ERROR(kiln_data_source_create(rt, "idx", config, 3, &src), KILN_ERR_INVALID_ARGUMENT, "'limit' is -1",
              "expected 0 (every example) or more");
  CHECK(src == NULL);
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  test_plain_and_gzip(rt);
  test_gzip_members(rt);
  test_wide_types(rt);
  test_bad_files(rt);
  test_empty_but_huge_items(rt);
  test_index_range(rt);
  test_limit(rt);
  kiln_runtime_release(rt);
  return check_report("plugins/data/idx");
}
