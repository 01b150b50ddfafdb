#include "scratch.h"

#include <stdlib.h>
#include <string.h>

#include "host.h"

void kl_scratch_init(kl_scratch* s, kiln_runtime* runtime) {
  s->runtime = runtime;
  s->tensors = s->inline_tensors;
  s->count = 0;
  s->capacity = KL_SCRATCH_INLINE;
}

/* Doubles the room of the list, moving it to the heap the first time. */
static int grow(kl_scratch* s) {
  const size_t capacity = 2 * s->capacity;
  kiln_tensor** bigger;
  if (s->tensors == s->inline_tensors) {
    bigger = malloc(capacity * sizeof *bigger);
    if (bigger) memcpy(bigger, s->inline_tensors, s->count * sizeof *bigger);
  } else {
    bigger = realloc(s->tensors, capacity * sizeof *bigger);
  }
  if (!bigger) return 0;
  s->tensors = bigger;
  s->capacity = capacity;
  return 1;
}

kiln_status kl_scratch_keep(kl_scratch* s, kiln_tensor* t) {
  if (s->count == s->capacity && !grow(s)) {
    kl_host.tensor_release(t);
    return kl_fail(KILN_ERR_OUT_OF_MEMORY, "no memory to keep more than %zu temporary tensors of a layer's forward",
                   s->count);
  }
  s->tensors[s->count++] = t;
  return KILN_OK;
}

kiln_status kl_call(kl_scratch* s, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                    const kiln_attr* attrs, size_t n_attrs, kiln_tensor** out) {
  kiln_tensor* result = NULL;
  kiln_status st = kl_host.op_call1(s->runtime, op, inputs, n_inputs, attrs, n_attrs, &result);
  if (st == KILN_OK) st = kl_scratch_keep(s, result);
  if (st == KILN_OK) *out = result;
  return st;
}

kiln_status kl_call_n(kl_scratch* s, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                      const kiln_attr* attrs, size_t n_attrs, kiln_tensor** outputs, size_t max_outputs) {
  size_t produced = 0, i;
  kiln_status st = kl_host.op_call(s->runtime, op, inputs, n_inputs, attrs, n_attrs, outputs, max_outputs, &produced);
  /* After a failed keep, the outputs not yet kept are still ours to drop. */
  for (i = 0; i < produced; ++i) {
    if (st == KILN_OK)
      st = kl_scratch_keep(s, outputs[i]);
    else
      kl_host.tensor_release(outputs[i]);
  }
  return st;
}

kiln_status kl_scratch_finish(kl_scratch* s, kiln_status status, kiln_tensor* result, kiln_tensor** out) {
  size_t i;
  if (status == KILN_OK) {
    kl_host.tensor_retain(result);
    *out = result;
  }
  for (i = 0; i < s->count; ++i) kl_host.tensor_release(s->tensors[i]);
  if (s->tensors != s->inline_tensors) free(s->tensors);
  kl_scratch_init(s, s->runtime);
  return status;
}
