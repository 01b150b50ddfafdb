/* The configuration every convolution layer starts with, in PyTorch's order:
 * in_channels, out_channels, kernel_size, stride, padding, dilation. */
#ifndef KILN_LAYERS_CONV_CONFIG_H
#define KILN_LAYERS_CONV_CONFIG_H

#include <kiln/kiln_plugin.h>

#include "config.h"

typedef struct kl_conv_geometry {
  int64_t in_channels, out_channels;
  int64_t kernel[2], stride[2], padding[2], dilation[2]; /* height, width */
} kl_conv_geometry;

enum { KL_CONV_IN, KL_CONV_OUT, KL_CONV_KERNEL, KL_CONV_STRIDE, KL_CONV_PADDING, KL_CONV_DILATION, KL_CONV_N_COMMON };

#define KL_CONV_CONFIG_COMMON                                                                                      \
  [KL_CONV_IN] = {{"in_channels", KILN_ATTR_INT, {.i = 0}}, 1, "channels of the input"},                           \
  [KL_CONV_OUT] = {{"out_channels", KILN_ATTR_INT, {.i = 0}}, 1, "channels of the output"},                        \
  [KL_CONV_KERNEL] = {{"kernel_size", KILN_ATTR_INTS, {.ints = {NULL, 0}}}, 1, "[k] or [kh, kw]"},                 \
  [KL_CONV_STRIDE] = {{"stride", KILN_ATTR_INTS, {.ints = {kl_one, 1}}}, 0, "[s] or [sh, sw]"},                    \
  [KL_CONV_PADDING] = {{"padding", KILN_ATTR_INTS, {.ints = {kl_zero, 1}}}, 0,                                     \
                       "zeros added on each side: [p] or [ph, pw]"},                                               \
  [KL_CONV_DILATION] = {{"dilation", KILN_ATTR_INTS, {.ints = {kl_one, 1}}}, 0,                                    \
                        "spacing of the kernel: [d] or [dh, dw]"}

/* Reads and checks the common entries of `config`. */
kiln_status kl_read_conv_geometry(const char* layer, const kiln_attr* config, kl_conv_geometry* g);

#endif /* KILN_LAYERS_CONV_CONFIG_H */
