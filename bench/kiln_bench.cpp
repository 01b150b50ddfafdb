// kiln_bench: prints CPU timings of kiln's hot paths. See bench/README.md for
// what each row measures. `kiln_bench dispatch` runs the dispatch row alone,
// `kiln_bench pieces` the transformer's and the LSTM's pieces, `kiln_bench
// convs` ResNet-18's 3x3 convolutions and the Fashion-MNIST network's 5x5 one.
#include <cstdio>
#include <cstring>
#include <exception>

#include "bench_convs.hpp"
#include "bench_linear_activation.hpp"
#include "bench_ops.hpp"
#include "bench_transformer_pieces.hpp"
#include "kiln/error.hpp"

int main(int argc, char** argv) {
  try {
    kiln::Runtime rt;
    if (argc > 1 && std::strcmp(argv[1], "dispatch") == 0) {
      kiln::bench::bench_dispatch(rt);
      return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "convs") == 0) {
      kiln::bench::bench_convs();
      return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "pieces") == 0) {
      kiln::bench::bench_transformer_pieces(rt);
      return 0;
    }
    std::printf("kiln CPU benchmark (f32, %d kernel threads; times are medians)\n\n", rt.thread_pool().num_workers());
    kiln::bench::bench_matmul(rt);
    kiln::bench::bench_conv2d(rt);
    kiln::bench::bench_mlp_step(rt);
    kiln::bench::bench_linear_activation(rt);
    kiln::bench::bench_transformer_pieces(rt);
    kiln::bench::bench_convs();
    kiln::bench::bench_dispatch(rt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
