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

/* Fails unless `x` has a rank in [min_rank, max_rank] (`shapes` names them,
 * "[N, C, ...]") and `channels` channels in dim 1, as the config entry
 * `channels_name` set them: the input check of the normalisation layers. */
kiln_status kl_expect_channels(const char* layer, const kiln_tensor* x, int min_rank, int max_rank,
                               const char* shapes, const char* channels_name, int64_t channels);

#endif /* KILN_LAYERS_HOST_H */
