/* Dropout as a step of a forward (Dropout, MultiHeadAttention's attention
 * weights, TransformerBlock's residual branches). */
#ifndef KILN_LAYERS_DROPOUT_H
#define KILN_LAYERS_DROPOUT_H

#include "scratch.h"

/* *out = x in eval mode or with p = 0 (no op runs); otherwise the "dropout"
 * op `dropout` (elements zeroed with probability p, the others scaled by
 * 1 / (1 - p), from the runtime's random stream). */
kiln_status kl_dropout_apply(kl_scratch* s, const kiln_op* dropout, kiln_tensor* x, double p, int training,
                             kiln_tensor** out);

#endif /* KILN_LAYERS_DROPOUT_H */
