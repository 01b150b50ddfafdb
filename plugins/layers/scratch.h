/* The temporaries of one forward. Every tensor an op gives back is kept in a
 * scratch list and released when the forward ends, so a forward made of many
 * ops has a single cleanup path whichever op fails:
 *
 *   kl_scratch s;
 *   kiln_tensor* y = NULL;
 *   kiln_status st;
 *   kl_scratch_init(&s, call->runtime);
 *   KL_TRY(kl_call(&s, op, &x, 1, NULL, 0, &y));
 *   ...
 * done:
 *   return kl_scratch_finish(&s, st, y, &call->outputs[0]);
 */
#ifndef KILN_LAYERS_SCRATCH_H
#define KILN_LAYERS_SCRATCH_H

#include <kiln/kiln_plugin.h>

/* Kept in place: enough for most forwards (a transformer block keeps about
 * 20). A recurrent layer keeps a few per time step; past this the list
 * moves to the heap and grows. */
#define KL_SCRATCH_INLINE 48

typedef struct kl_scratch {
  kiln_runtime* runtime;
  kiln_tensor** tensors; /* inline_tensors, or a malloc'd array once grown */
  size_t count, capacity;
  kiln_tensor* inline_tensors[KL_SCRATCH_INLINE];
} kl_scratch;

/* Runs `call` (a kiln_status expression) and jumps to `done` on failure;
 * needs a `kiln_status st` in scope. */
#define KL_TRY(call)                   \
  do {                                 \
    if ((st = (call)) != KILN_OK) goto done; \
  } while (0)

void kl_scratch_init(kl_scratch* s, kiln_runtime* runtime);

/* Takes over the reference `t`; released by kl_scratch_finish. */
kiln_status kl_scratch_keep(kl_scratch* s, kiln_tensor* t);

/* An op with one output: *out is kept in the scratch list. */
kiln_status kl_call(kl_scratch* s, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                    const kiln_attr* attrs, size_t n_attrs, kiln_tensor** out);

/* An op with several outputs: outputs[0 .. max_outputs) are kept. */
kiln_status kl_call_n(kl_scratch* s, const kiln_op* op, kiln_tensor* const* inputs, size_t n_inputs,
                      const kiln_attr* attrs, size_t n_attrs, kiln_tensor** outputs, size_t max_outputs);

/* Ends a forward: when `status` is KILN_OK, *out receives a new reference on
 * `result`. Releases every kept tensor either way and returns `status`. */
kiln_status kl_scratch_finish(kl_scratch* s, kiln_status status, kiln_tensor* result, kiln_tensor** out);

#endif /* KILN_LAYERS_SCRATCH_H */
