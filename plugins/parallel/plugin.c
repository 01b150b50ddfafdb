/* kiln-parallel: how training is spread over processes: "single" (one
 * process), "ddp" (data parallel over the runtime's default process
 * group) and "zero1" (ddp with the optimizer's state sharded). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "host.h"

kiln_host kp_host;

kiln_status kp_fail(kiln_status status, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof message, format, args);
  va_end(args);
  return kp_host.error(status, message);
}

static kiln_status register_parallel(const kiln_host* h, kiln_registrar* registrar) {
  kiln_status st;
  memset(&kp_host, 0, sizeof kp_host);
  memcpy(&kp_host, h, h->size < sizeof kp_host ? h->size : sizeof kp_host);
  st = kp_register_single(registrar);
  /* ddp and zero1 need the process groups and gradient hooks of ABI 1.1. */
  if (st == KILN_OK && KILN_HOST_HAS(h, work_release)) st = kp_register_ddp(registrar);
  if (st == KILN_OK && KILN_HOST_HAS(h, work_release)) st = kp_register_zero1(registrar);
  return st;
}

KILN_PLUGIN_EXPORT const kiln_plugin_descriptor* kiln_plugin_entry(void) {
  static const kiln_plugin_descriptor descriptor = {sizeof descriptor, KILN_PLUGIN_ABI(1, 0), KILN_PLUGIN_ABI(1, 1),
                                                    "kiln-parallel", "0.3.0", register_parallel};
  return &descriptor;
}
