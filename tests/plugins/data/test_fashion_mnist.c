/* The real Fashion-MNIST training set, read through the "idx" source, when
 * the dataset-fashion-mnist package is installed; skipped otherwise. */
#include <unistd.h>

#include "data_test.h"

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"
enum { SKIP = 77 };

/* The first of `names` that exists in FASHION_DIR, or NULL. */
static const char* find_file(const char* const* names, char* buffer, size_t size) {
  for (; *names; ++names) {
    snprintf(buffer, size, "%s/%s", FASHION_DIR, *names);
    if (access(buffer, R_OK) == 0) return buffer;
  }
  return NULL;
}

int main(void) {
  static const char* const image_names[] = {"train-images-idx3-ubyte.gz", "train-images-idx3-ubyte", NULL};
  static const char* const label_names[] = {"train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte", NULL};
  char images_buffer[512], labels_buffer[512];
  const char* images = find_file(image_names, images_buffer, sizeof images_buffer);
  const char* labels = find_file(label_names, labels_buffer, sizeof labels_buffer);
  kiln_runtime* rt;
  kiln_data_source* src = NULL;
  int64_t length = 0, i;
  unsigned char pixels[28 * 28];
  kiln_tensor_desc desc;
  const int64_t dims[2] = {28, 28};
  int labels_in_range = 1;
  if (!images || !labels) {
    printf("skipped: the Fashion-MNIST training files are not in " FASHION_DIR
           " (install the dataset-fashion-mnist package)\n");
    return SKIP;
  }
  rt = open_runtime();
  {
    const kiln_attr config[2] = {kiln_attr_string("images", images), kiln_attr_string("labels", labels)};
    CHECK_OK(kiln_data_source_create(rt, "idx", config, 2, &src));
  }
  if (src) {
    CHECK_OK(kiln_data_source_length(src, &length));
    CHECK(length == 60000);
    read_example_field(src, length - 1, "input", &desc, pixels, sizeof pixels);
    CHECK(desc_is(&desc, KILN_U8, 2, dims));
    for (i = 0; i < length; i += 997) {
      const int64_t t = example_target(src, i);
      labels_in_range = labels_in_range && t >= 0 && t < 10;
    }
    CHECK(labels_in_range);
    kiln_data_source_release(src);
  }
  kiln_runtime_release(rt);
  return check_report("plugins/data/fashion_mnist");
}
