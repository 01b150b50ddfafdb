/* Who owns what: wrapped memory goes back through the host's callback exactly
 * once, after the last tensor viewing it; tensors keep their runtime alive;
 * handles of two runtimes do not mix; data pointers of views. */
#include <stdint.h>
#include <string.h>

#include "check.h"

typedef struct release_record {
  int calls;
  void* data;
} release_record;

static void record_release(void* user_data, void* data) {
  release_record* r = (release_record*)user_data;
  ++r->calls;
  r->data = data;
}

static void wrapped_memory_is_released_once_after_the_last_view(kiln_runtime* rt) {
  float buffer[6] = {0, 1, 2, 3, 4, 5}, back[6];
  const int64_t shape[2] = {2, 3}, flat[1] = {6}, one[1] = {1};
  release_record record = {0, NULL};
  const kiln_op* reshape = NULL;
  kiln_tensor *wrapped = NULL, *view = NULL, *detached = NULL;
  kiln_attr attr = kiln_attr_ints("shape", flat, 1);
  void* data = NULL;

  /* A failed wrap leaves the memory the caller's: no callback. */
  CHECK_ERROR(kiln_tensor_wrap(rt, buffer, 20, shape, 2, KILN_F32, record_release, &record, &wrapped),
              KILN_ERR_INVALID_ARGUMENT, "needs 24 bytes");
  CHECK_ERROR(kiln_tensor_wrap(rt, (char*)buffer + 2, 4, one, 1, KILN_I32, record_release, &record, &wrapped),
              KILN_ERR_INVALID_ARGUMENT, "not aligned");
  CHECK(record.calls == 0 && wrapped == NULL);

  CHECK_OK(kiln_tensor_wrap(rt, buffer, sizeof buffer, shape, 2, KILN_F32, record_release, &record, &wrapped));
  CHECK_OK(kiln_tensor_data(wrapped, &data));
  CHECK(data == (void*)buffer);
  buffer[4] = 40.0f; /* no copy: the tensor sees the host's writes */
  CHECK_OK(kiln_tensor_read(wrapped, back, sizeof back));
  CHECK(back[4] == 40.0f);

  CHECK_OK(kiln_op_find(rt, "reshape", &reshape));
  CHECK_OK(kiln_op_call1(rt, reshape, &wrapped, 1, &attr, 1, &view));
  CHECK_OK(kiln_tensor_detach(view, &detached));
  kiln_tensor_release(wrapped);
  CHECK(record.calls == 0);
  kiln_tensor_release(view);
  CHECK(record.calls == 0);
  kiln_tensor_release(detached);
  CHECK(record.calls == 1 && record.data == (void*)buffer);
}

static void tensors_keep_their_runtime_alive(void) {
  const int64_t shape[1] = {3};
  kiln_runtime* rt = NULL;
  kiln_tensor *t = NULL, *copy = NULL;
  float back[3] = {0, 0, 0};
  CHECK_OK(kiln_runtime_create(NULL, &rt));
  CHECK_OK(kiln_tensor_full(rt, shape, 1, 7.0, KILN_F32, KILN_DEVICE_CPU, 0, &t));
  kiln_runtime_release(rt); /* the tensor still holds a reference */
  CHECK_OK(kiln_tensor_contiguous(t, &copy));
  CHECK_OK(kiln_tensor_read(copy, back, sizeof back));
  CHECK(back[0] == 7.0f && back[2] == 7.0f);
  kiln_tensor_release(t);
  kiln_tensor_release(copy); /* the last reference: the runtime goes now */
}

static void runtimes_do_not_mix(kiln_runtime* rt, kiln_tensor* t) {
  const int64_t shape[1] = {6};
  kiln_runtime* other = NULL;
  const kiln_op *theirs = NULL, *ours = NULL;
  kiln_tensor *foreign = NULL, *out = NULL;
  kiln_attr attr = kiln_attr_ints("shape", shape, 1);
  CHECK_OK(kiln_runtime_create(NULL, &other));
  CHECK_OK(kiln_op_find(other, "reshape", &theirs));
  CHECK_OK(kiln_op_find(rt, "reshape", &ours));
  CHECK(theirs != ours);
  CHECK_ERROR(kiln_op_call1(rt, theirs, &t, 1, &attr, 1, &out), KILN_ERR_INVALID_ARGUMENT, "another runtime");
  CHECK_OK(kiln_tensor_full(other, shape, 1, 1.0, KILN_F32, KILN_DEVICE_CPU, 0, &foreign));
  CHECK_ERROR(kiln_op_call1(rt, ours, &foreign, 1, &attr, 1, &out), KILN_ERR_INVALID_ARGUMENT, "input 0",
              "another runtime");
  CHECK_ERROR(kiln_backward(rt, foreign, NULL, 0), KILN_ERR_INVALID_ARGUMENT, "another runtime");
  CHECK(out == NULL);
  kiln_tensor_release(foreign);
  kiln_runtime_release(other);
}

static void op_handles_are_stable(kiln_runtime* rt) {
  const kiln_op *a = NULL, *b = NULL;
  CHECK_OK(kiln_op_find(rt, "transpose", &a));
  CHECK_OK(kiln_op_find(rt, "transpose", &b));
  CHECK(a != NULL && a == b);
}

static void data_pointers_of_views(kiln_runtime* rt, kiln_tensor* t) {
  const kiln_op* transpose = NULL;
  kiln_tensor *view = NULL, *dense = NULL, *same = NULL, *moved = NULL;
  kiln_attr attrs[2];
  void* data = NULL;
  float back[6];
  attrs[0] = kiln_attr_int("dim0", 0);
  attrs[1] = kiln_attr_int("dim1", 1);
  CHECK_OK(kiln_op_find(rt, "transpose", &transpose));
  CHECK_OK(kiln_op_call1(rt, transpose, &t, 1, attrs, 2, &view));
  CHECK_ERROR(kiln_tensor_data(view, &data), KILN_ERR_INVALID_STATE, "strided", "kiln_tensor_contiguous");
  CHECK_OK(kiln_tensor_contiguous(view, &dense));
  CHECK_OK(kiln_tensor_data(dense, &data));
  CHECK(data != NULL);
  CHECK_OK(kiln_tensor_read(view, back, sizeof back)); /* reads any layout */
  CHECK(back[0] == 0.0f && back[1] == 3.0f && back[2] == 1.0f);
  CHECK_OK(kiln_tensor_contiguous(dense, &same));
  CHECK(same == dense); /* already dense: the same tensor, one more reference */
  CHECK_OK(kiln_tensor_to(dense, KILN_DEVICE_CPU, 0, &moved));
  CHECK(moved == dense); /* already there */
  CHECK_ERROR(kiln_tensor_to(dense, KILN_DEVICE_CUDA, 99, &moved), KILN_ERR_DEVICE_MISMATCH, "cuda:99");
  kiln_tensor_release(moved);
  kiln_tensor_release(same);
  kiln_tensor_release(dense);
  kiln_tensor_release(view);
}

int main(void) {
  const int64_t shape[2] = {2, 3};
  const float values[6] = {0, 1, 2, 3, 4, 5};
  kiln_runtime* rt = NULL;
  kiln_tensor* t = NULL;
  if (kiln_runtime_create(NULL, &rt) != KILN_OK ||
      kiln_tensor_from_data(rt, values, sizeof values, shape, 2, KILN_F32, &t) != KILN_OK) {
    fprintf(stderr, "setup failed: %s\n", kiln_last_error());
    return 1;
  }
  wrapped_memory_is_released_once_after_the_last_view(rt);
  tensors_keep_their_runtime_alive();
  runtimes_do_not_mix(rt, t);
  op_handles_are_stable(rt);
  data_pointers_of_views(rt, t);
  kiln_tensor_release(t);
  kiln_runtime_release(rt);
  return check_report("abi/lifetime");
}
