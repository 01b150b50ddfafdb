/* One data source read from 4 threads at once gives the same examples as
 * one thread. */
#include <pthread.h>

#include "data_test.h"

enum { LENGTH = 256, ITEM = 4 * 8, THREADS = 4 };

static kiln_data_source* source;
static float expected[LENGTH][ITEM];
static float got[THREADS][LENGTH][ITEM];
static int failures[THREADS];

static int read_input(int64_t index, float* out) {
  kiln_example* ex = NULL;
  kiln_tensor* t = NULL;
  int ok = kiln_data_source_get(source, index, &ex) == KILN_OK && kiln_example_get(ex, "input", &t) == KILN_OK &&
           kiln_tensor_read(t, out, ITEM * sizeof(float)) == KILN_OK;
  kiln_tensor_release(t);
  kiln_example_release(ex);
  return ok;
}

static void* reader(void* arg) {
  const int id = *(const int*)arg;
  int64_t i;
  /* Each thread walks the source in its own order. */
  for (i = 0; i < LENGTH; ++i) {
    const int64_t index = (i * (2 * id + 1) + id) % LENGTH;
    if (!read_input(index, got[id][index])) ++failures[id];
  }
  return NULL;
}

int main(void) {
  kiln_runtime* rt = open_runtime();
  const int64_t shape[2] = {4, 8};
  const kiln_attr config[3] = {kiln_attr_int("length", LENGTH), kiln_attr_ints("shape", shape, 2),
                               kiln_attr_int("seed", 7)};
  pthread_t threads[THREADS];
  int ids[THREADS], t;
  int64_t i;
  CHECK_OK(kiln_data_source_create(rt, "synthetic", config, 3, &source));
  if (!source) return check_report("plugins/data/threads");
  for (i = 0; i < LENGTH; ++i) CHECK(read_input(i, expected[i]));
  for (t = 0; t < THREADS; ++t) {
    ids[t] = t;
    CHECK(pthread_create(&threads[t], NULL, reader, &ids[t]) == 0);
  }
  for (t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  for (t = 0; t < THREADS; ++t) {
    CHECK(failures[t] == 0);
    CHECK(memcmp(got[t], expected, sizeof expected) == 0);
  }
  kiln_data_source_release(source);
  kiln_runtime_release(rt);
  return check_report("plugins/data/threads");
}
