/* Plain-loop references in double precision for the layer tests. Arrays
 * are row-major; a NULL bias means none. */
#ifndef KILN_LAYER_TEST_REFERENCE_H
#define KILN_LAYER_TEST_REFERENCE_H

#include <stdint.h>

/* y [rows, out] = x [rows, in] w^T (w [out, in]) + b [out]. */
void linear_reference(const double* x, int64_t rows, int64_t in, const double* w, const double* b, int64_t out,
                      double* y);

typedef struct conv_reference_geometry {
  int64_t n, c, h, w;      /* input [n, c, h, w] */
  int64_t o, kh, kw;       /* weight [o, c / groups, kh, kw] */
  int64_t stride[2], padding[2], dilation[2], groups;
} conv_reference_geometry;

/* Output height and width of a convolution. */
int64_t conv_reference_out(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation);

/* y [n, o, oh, ow], zero padding. */
void conv2d_reference(const conv_reference_geometry* g, const double* x, const double* w, const double* b, double* y);

/* Each of `rows` rows of `size` values normalised (biased variance), then
 * y = x_hat * w + b (w, b of `size`, NULL: 1 and 0). */
void layer_norm_reference(const double* x, int64_t rows, int64_t size, const double* w, const double* b, double eps,
                          double* y);

/* MultiHeadAttention's parameters: [e, e] weights and [e] biases (NULL
 * without bias). */
typedef struct attention_reference_params {
  const double *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo;
} attention_reference_params;

/* Points p's q, k and v weights and biases at the row blocks [0, e),
 * [e, 2e), [2e, 3e) of in_proj_weight [3e, e] and in_proj_bias [3e] (NULL:
 * no biases), PyTorch's MultiheadAttention layout. */
void attention_reference_in_proj(attention_reference_params* p, int64_t e, const double* in_proj_weight,
                                 const double* in_proj_bias);

/* out [n, l, e] for query [n, l, e], key and value [n, s, e], h heads. */
void attention_reference(int64_t n, int64_t l, int64_t s, int64_t e, int64_t h, int causal, const double* query,
                         const double* key, const double* value, const attention_reference_params* p, double* out);

#endif /* KILN_LAYER_TEST_REFERENCE_H */
