#include "conv_config.h"

#include <string.h>

kiln_status kl_read_conv_geometry(const char* layer, const kiln_attr* config, kl_conv_geometry* g) {
  kiln_status st;
  memset(g, 0, sizeof *g);
  g->in_channels = config[KL_CONV_IN].value.i;
  g->out_channels = config[KL_CONV_OUT].value.i;
  if ((st = kl_check_int_min(layer, &config[KL_CONV_IN], 1)) != KILN_OK) return st;
  if ((st = kl_check_int_min(layer, &config[KL_CONV_OUT], 1)) != KILN_OK) return st;
  if ((st = kl_read_pair(layer, &config[KL_CONV_KERNEL], 1, 0, g->kernel)) != KILN_OK) return st;
  if ((st = kl_read_pair(layer, &config[KL_CONV_STRIDE], 1, 0, g->stride)) != KILN_OK) return st;
  if ((st = kl_read_pair(layer, &config[KL_CONV_PADDING], 0, 0, g->padding)) != KILN_OK) return st;
  return kl_read_pair(layer, &config[KL_CONV_DILATION], 1, 0, g->dilation);
}
