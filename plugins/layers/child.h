/* Layers made of other layers (DepthwiseSeparableConv2d,
 * MultiHeadAttention, TransformerBlock): their children are modules of
 * registered types, created through the host and named in the parent, so
 * their parameters appear as "<child>.<parameter>". */
#ifndef KILN_LAYERS_CHILD_H
#define KILN_LAYERS_CHILD_H

#include "scratch.h"

/* Creates a layer of `type` configured by `config` and adds it to the layer
 * being created as `name`. *out receives the caller's own reference (the
 * parent module keeps another). */
kiln_status kl_add_child(kiln_layer_init* init, const char* name, const char* type, const kiln_attr* config,
                         size_t n_config, kiln_module** out);

/* The one output of `child` on x, kept in the scratch list. */
kiln_status kl_forward_child(kl_scratch* s, kiln_module* child, kiln_tensor* x, kiln_tensor** out);

#endif /* KILN_LAYERS_CHILD_H */
