/* What MultiHeadAttention and the TransformerBlock around it both check. */
#ifndef KILN_LAYERS_ATTENTION_H
#define KILN_LAYERS_ATTENTION_H

#include <kiln/kiln_plugin.h>

/* embed_dim >= 1, num_heads >= 1 dividing it, dropout in [0, 1); errors
 * name `layer`. */
kiln_status kl_check_attention_config(const char* layer, const kiln_attr* embed_dim, const kiln_attr* num_heads,
                                      const kiln_attr* dropout);

#endif /* KILN_LAYERS_ATTENTION_H */
