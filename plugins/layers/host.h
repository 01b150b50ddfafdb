/* The host table the plugin reaches the runtime through, and how its
 * callbacks report failures. */
#ifndef KILN_LAYERS_HOST_H
#define KILN_LAYERS_HOST_H

#include <kiln/kiln_plugin.h>

/* A copy of the table given to register_fn. The function pointers are the
 * same for every runtime that loads the plugin; a copy (rather than the
 * pointer) stays valid whichever of those runtimes goes first. Only its
 * function members are used. */
extern kiln_host kl_host;

void kl_host_set(const kiln_host* host);

/* Formats a message and records it with host->error: the return value of
 * a failing callback. */
kiln_status kl_fail(kiln_status status, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Fails unless the call got exactly `expected` inputs. */
kiln_status kl_expect_inputs(const char* layer, const kiln_layer_call* call, size_t expected);

#endif /* KILN_LAYERS_HOST_H */
