/* The registration of each family of layers of the kiln-layers plugin;
 * plugin.c calls them all from register_fn. */
#ifndef KILN_LAYERS_LAYERS_H
#define KILN_LAYERS_LAYERS_H

#include <kiln/kiln_plugin.h>

kiln_status kl_register_linear(kiln_registrar* registrar);      /* Linear */
kiln_status kl_register_conv(kiln_registrar* registrar);        /* Conv1d, Conv2d, ConvTranspose2d */
kiln_status kl_register_separable_conv(kiln_registrar* registrar); /* DepthwiseSeparableConv2d */
kiln_status kl_register_op_layers(kiln_registrar* registrar);   /* pools, activations, Softmax */
kiln_status kl_register_flatten(kiln_registrar* registrar);     /* Flatten */
kiln_status kl_register_dropout(kiln_registrar* registrar);     /* Dropout */
kiln_status kl_register_batch_norm(kiln_registrar* registrar);  /* BatchNorm1d, BatchNorm2d */
kiln_status kl_register_layer_norm(kiln_registrar* registrar);  /* LayerNorm */
kiln_status kl_register_channel_norm(kiln_registrar* registrar); /* GroupNorm, InstanceNorm2d */
kiln_status kl_register_upsample(kiln_registrar* registrar);    /* Upsample */
kiln_status kl_register_prelu(kiln_registrar* registrar);       /* PReLU */
kiln_status kl_register_embedding(kiln_registrar* registrar);   /* Embedding */
kiln_status kl_register_attention(kiln_registrar* registrar);   /* MultiHeadAttention */
kiln_status kl_register_transformer(kiln_registrar* registrar); /* TransformerBlock */
kiln_status kl_register_lstm(kiln_registrar* registrar);        /* LSTM */
kiln_status kl_register_gru(kiln_registrar* registrar);         /* GRU */

#endif /* KILN_LAYERS_LAYERS_H */
