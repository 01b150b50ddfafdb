#include "reference.h"

#include <math.h>
#include <stdlib.h>

void linear_reference(const double* x, int64_t rows, int64_t in, const double* w, const double* b, int64_t out,
                      double* y) {
  int64_t r, o, i;
  for (r = 0; r < rows; ++r) {
    for (o = 0; o < out; ++o) {
      double sum = b ? b[o] : 0.0;
      for (i = 0; i < in; ++i) sum += x[r * in + i] * w[o * in + i];
      y[r * out + o] = sum;
    }
  }
}

int64_t conv_reference_out(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
}

void conv2d_reference(const conv_reference_geometry* g, const double* x, const double* w, const double* b, double* y) {
  const int64_t oh = conv_reference_out(g->h, g->kh, g->stride[0], g->padding[0], g->dilation[0]);
  const int64_t ow = conv_reference_out(g->w, g->kw, g->stride[1], g->padding[1], g->dilation[1]);
  const int64_t cg = g->c / g->groups, og = g->o / g->groups;
  int64_t n, o, i, j, c, p, q;
  for (n = 0; n < g->n; ++n)
    for (o = 0; o < g->o; ++o)
      for (i = 0; i < oh; ++i)
        for (j = 0; j < ow; ++j) {
          const int64_t group = o / og;
          double sum = b ? b[o] : 0.0;
          for (c = 0; c < cg; ++c)
            for (p = 0; p < g->kh; ++p)
              for (q = 0; q < g->kw; ++q) {
                const int64_t row = i * g->stride[0] - g->padding[0] + p * g->dilation[0];
                const int64_t col = j * g->stride[1] - g->padding[1] + q * g->dilation[1];
                const int64_t channel = group * cg + c;
                if (row < 0 || row >= g->h || col < 0 || col >= g->w) continue;
                sum += x[((n * g->c + channel) * g->h + row) * g->w + col] * w[((o * cg + c) * g->kh + p) * g->kw + q];
              }
          y[((n * g->o + o) * oh + i) * ow + j] = sum;
        }
}

void layer_norm_reference(const double* x, int64_t rows, int64_t size, const double* w, const double* b, double eps,
                          double* y) {
  int64_t r, k;
  for (r = 0; r < rows; ++r) {
    const double* row = x + r * size;
    double mean = 0, var = 0;
    for (k = 0; k < size; ++k) mean += row[k];
    mean /= (double)size;
    for (k = 0; k < size; ++k) var += (row[k] - mean) * (row[k] - mean);
    var /= (double)size;
    for (k = 0; k < size; ++k)
      y[r * size + k] = (row[k] - mean) / sqrt(var + eps) * (w ? w[k] : 1.0) + (b ? b[k] : 0.0);
  }
}

void attention_reference_in_proj(attention_reference_params* p, int64_t e, const double* in_proj_weight,
                                 const double* in_proj_bias) {
  p->wq = in_proj_weight;
  p->wk = in_proj_weight + e * e;
  p->wv = in_proj_weight + 2 * e * e;
  p->bq = in_proj_bias;
  p->bk = in_proj_bias ? in_proj_bias + e : NULL;
  p->bv = in_proj_bias ? in_proj_bias + 2 * e : NULL;
}

void attention_reference(int64_t n, int64_t l, int64_t s, int64_t e, int64_t h, int causal, const double* query,
                         const double* key, const double* value, const attention_reference_params* p, double* out) {
  const int64_t d = e / h;
  double* q = malloc((size_t)(n * l * e) * sizeof *q);
  double* k = malloc((size_t)(n * s * e) * sizeof *k);
  double* v = malloc((size_t)(n * s * e) * sizeof *v);
  double* context = malloc((size_t)(n * l * e) * sizeof *context);
  double* weights = malloc((size_t)s * sizeof *weights);
  int64_t b, head, t, j, f;
  linear_reference(query, n * l, e, p->wq, p->bq, e, q);
  linear_reference(key, n * s, e, p->wk, p->bk, e, k);
  linear_reference(value, n * s, e, p->wv, p->bv, e, v);
  for (b = 0; b < n; ++b)
    for (head = 0; head < h; ++head)
      for (t = 0; t < l; ++t) {
        double max = -INFINITY, total = 0;
        for (j = 0; j < s; ++j) {
          double dot = 0;
          for (f = 0; f < d; ++f) dot += q[(b * l + t) * e + head * d + f] * k[(b * s + j) * e + head * d + f];
          weights[j] = causal && j > t ? -INFINITY : dot / sqrt((double)d);
          if (weights[j] > max) max = weights[j];
        }
        for (j = 0; j < s; ++j) total += weights[j] = exp(weights[j] - max);
        for (f = 0; f < d; ++f) {
          double sum = 0;
          for (j = 0; j < s; ++j) sum += weights[j] / total * v[(b * s + j) * e + head * d + f];
          context[(b * l + t) * e + head * d + f] = sum;
        }
      }
  linear_reference(context, n * l, e, p->wo, p->bo, e, out);
  free(q);
  free(k);
  free(v);
  free(context);
  free(weights);
}
