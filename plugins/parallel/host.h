/* The host table the parallel strategies reach the runtime through, and how
 * their callbacks report failures. */
#ifndef KILN_PARALLEL_HOST_H
#define KILN_PARALLEL_HOST_H

#include <kiln/kiln_plugin.h>

/* A copy of the table given to register_fn (its function pointers are the
 * same for every runtime that loads the plugin). */
extern kiln_host kp_host;

/* Formats a message and records it with host->error: the return value of
 * a failing callback. */
kiln_status kp_fail(kiln_status status, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The strategies, registered by plugin.c. */
kiln_status kp_register_single(kiln_registrar* registrar);
kiln_status kp_register_ddp(kiln_registrar* registrar);
kiln_status kp_register_zero1(kiln_registrar* registrar);

#endif /* KILN_PARALLEL_HOST_H */
