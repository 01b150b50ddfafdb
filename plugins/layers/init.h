/* Parameter initialisers, drawn from the runtime's random stream through the
 * "rand" and "randn" ops, with PyTorch's definitions (torch.nn.init). Every
 * tensor is created on the CPU as f32, as kiln_layer_type.create requires. */
#ifndef KILN_LAYERS_INIT_H
#define KILN_LAYERS_INIT_H

#include <kiln/kiln_plugin.h>

typedef enum kl_init {
  /* U(-b, b), b = 1 / sqrt(fan_in): kaiming_uniform_ with a = sqrt(5),
   * PyTorch's default for the weight and bias of Linear and Conv2d. */
  KL_INIT_KAIMING_UNIFORM = 0,
  /* N(0, 2 / fan_in): He's initialisation for ReLU networks
   * (kaiming_normal_ with nonlinearity = "relu"). */
  KL_INIT_KAIMING_NORMAL,
  /* U(-b, b), b = sqrt(6 / (fan_in + fan_out)). */
  KL_INIT_XAVIER_UNIFORM,
  /* N(0, 2 / (fan_in + fan_out)). */
  KL_INIT_XAVIER_NORMAL,
  /* N(0, 1). */
  KL_INIT_NORMAL,
  KL_INIT_ZEROS,
  KL_INIT_ONES
} kl_init;

/* The names of the initialisers in kl_init order, NULL-terminated: the
 * values of an "init" configuration entry. */
extern const char* const kl_init_names[];

/* A new tensor of `shape` drawn by `init`; fan_in and fan_out are those of
 * the weight it belongs to (unused by zeros, ones and normal). */
kiln_status kl_init_tensor(kiln_runtime* rt, kl_init init, const int64_t* shape, int rank, int64_t fan_in,
                           int64_t fan_out, kiln_tensor** out);

/* Creates a tensor with kl_init_tensor and adds it to the layer as parameter
 * `name`. *out receives the caller's own reference (the module keeps
 * another). */
kiln_status kl_add_parameter(kiln_layer_init* init, const char* name, kl_init how, const int64_t* shape, int rank,
                             int64_t fan_in, int64_t fan_out, kiln_tensor** out);

/* The same for a buffer filled with `value`, of `dtype`. */
kiln_status kl_add_buffer(kiln_layer_init* init, const char* name, double value, kiln_dtype dtype,
                          const int64_t* shape, int rank, kiln_tensor** out);

#endif /* KILN_LAYERS_INIT_H */
