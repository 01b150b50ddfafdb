/* ddp's callbacks, for the strategies built on its gradient averaging
 * ("zero1" keeps a ddp state of its own and calls them on it). The `user`
 * given to kp_ddp_create is the strategy's name, used in its messages. */
#ifndef KILN_PARALLEL_DDP_H
#define KILN_PARALLEL_DDP_H

#include <kiln/kiln_plugin.h>

enum { KP_DDP_BUCKET_MB, KP_DDP_N_CONFIG };

/* ddp's configuration: bucket_mb. */
extern const kiln_attr_spec kp_ddp_config[KP_DDP_N_CONFIG];

kiln_status kp_ddp_create(void* user, kiln_runtime* rt, const kiln_attr* cfg, size_t n_config, void** state);
void kp_ddp_destroy(void* state);
kiln_status kp_ddp_rank(void* state, int* rank, int* world_size);
kiln_status kp_ddp_attach(void* state, kiln_module* model);
kiln_status kp_ddp_backward_begin(void* state, int sync);
kiln_status kp_ddp_reduce_gradients(void* state, kiln_tensor* const* params, size_t n_params);

#endif /* KILN_PARALLEL_DDP_H */
