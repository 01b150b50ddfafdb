// The additive reductions (sum, mean, norm p=1 and 2) over dense runs of
// elements, which are summed in interleaved partial sums and, for a whole
// large tensor, in runs summed in parallel: the same values as a plain
// double-precision reference, the same result for any thread count, and
// the strided path unchanged for inputs whose reduced elements are not
// one run.
#include <catch2/catch.hpp>

#include <cmath>

#include "kiln/runtime.hpp"
#include "support/gradcheck.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

struct Sums {
  double sum = 0, abs = 0, squares = 0;
};

Sums reference_sums(const std::vector<double>& v, size_t first, size_t count) {
  Sums s;
  for (size_t i = first; i < first + count; ++i) {
    s.sum += v[i];
    s.abs += std::abs(v[i]);
    s.squares += v[i] * v[i];
  }
  return s;
}

double scalar(Runtime& rt, const Tensor& t) { return values(rt, t).at(0); }

}  // namespace

TEST_CASE("a whole large tensor sums as a double reference does, for any thread count", "[reduction]") {
  // 3 runs of 2^15 and a partial one: every path of the split.
  const int64_t n = 3 * (int64_t(1) << 15) + 12345;
  for (DType dtype : {DType::f32, DType::f64}) {
    double first_threads_sum = 0;
    for (int threads : {1, 2, 3}) {
      RuntimeOptions options;
      options.num_threads = threads;
      Runtime rt(options);
      const Tensor x = random_tensor(rt, {n}, dtype, -1.0, 2.0, 7);
      const std::vector<double> v = values(rt, x);
      const Sums want = reference_sums(v, 0, v.size());
      const double tolerance = dtype == DType::f32 ? 1e-5 : 1e-12;
      const double sum = scalar(rt, rt.call1("sum", {x}));
      CHECK(sum == Approx(want.sum).epsilon(tolerance));
      CHECK(scalar(rt, rt.call1("mean", {x})) == Approx(want.sum / double(n)).epsilon(tolerance));
      CHECK(scalar(rt, rt.call1("norm", {x}, {{"p", 1.0}})) == Approx(want.abs).epsilon(tolerance));
      CHECK(scalar(rt, rt.call1("norm", {x})) == Approx(std::sqrt(want.squares)).epsilon(tolerance));
      if (threads == 1) first_threads_sum = sum;
      CHECK(sum == first_threads_sum);  // the runs are added in the same order whatever the threads
    }
  }
}

TEST_CASE("rows summed over their last dims, densely, and columns through the strided path", "[reduction]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {5, 3, 37}, DType::f32, -1.0, 1.0, 3);
  const std::vector<double> v = values(rt, x);
  // Over the last two dims: each output's 111 elements are one run.
  std::vector<double> rows;
  for (size_t r = 0; r < 5; ++r) rows.push_back(reference_sums(v, r * 111, 111).sum);
  require_close(rt, rt.call1("sum", {x}, {{"dims", std::vector<int64_t>{1, 2}}}), rows, 1e-5);
  // Over the first dim of a transposed view: not a run, the strided walk.
  const Tensor t = rt.call1("transpose", {x}, {{"dim0", 0}, {"dim1", 2}});  // [37, 3, 5]
  std::vector<double> columns;
  for (size_t b = 0; b < 3; ++b)
    for (size_t a = 0; a < 5; ++a) {
      double s = 0;
      for (size_t c = 0; c < 37; ++c) s += v[a * 111 + b * 37 + c];
      columns.push_back(s);
    }
  require_close(rt, rt.call1("sum", {t}, {{"dims", std::vector<int64_t>{0}}}), columns, 1e-5);
}

TEST_CASE("planes summed as runs: a bias gradient over N, H and W, through sum and sum_to", "[reduction]") {
  Runtime rt;
  const Tensor x = random_tensor(rt, {4, 3, 5, 6}, DType::f32, -1.0, 1.0, 5);
  const std::vector<double> v = values(rt, x);
  std::vector<double> per_channel(3, 0.0);
  for (size_t n = 0; n < 4; ++n)
    for (size_t c = 0; c < 3; ++c) per_channel[c] += reference_sums(v, (n * 3 + c) * 30, 30).sum;
  require_close(rt, rt.call1("sum", {x}, {{"dims", std::vector<int64_t>{0, 2, 3}}}), per_channel, 1e-5);
  require_close(rt, rt.call1("sum_to", {x}, {{"shape", std::vector<int64_t>{1, 3, 1, 1}}}), per_channel, 1e-5);
  require_close(rt, rt.call1("sum_to", {x}, {{"shape", std::vector<int64_t>{3, 1, 1}}}), per_channel, 1e-5);
  // Nothing to reduce: the input itself.
  require_close(rt, rt.call1("sum_to", {x}, {{"shape", std::vector<int64_t>{4, 3, 5, 6}}}), v, 0.0, 0.0);
}

TEST_CASE("columns of a dense matrix summed in row blocks: a linear layer's bias gradient, for any thread count",
          "[reduction]") {
  // 300 rows: 4 whole blocks of 64 and a partial one; 1100 columns: two
  // column ranges; and [2, 150, 70] over its first two dims, whose rows
  // span two dims.
  struct Case {
    Shape shape;
    std::vector<int64_t> dims;
  };
  for (const Case& k : {Case{{300, 1100}, {0}}, Case{{2, 150, 70}, {0, 1}}}) {
    const int64_t columns = k.shape[k.shape.rank() - 1], rows = k.shape.numel() / columns;
    for (DType dtype : {DType::f32, DType::f64}) {
      std::vector<double> first_threads;
      for (int threads : {1, 2, 3}) {
        RuntimeOptions options;
        options.num_threads = threads;
        Runtime rt(options);
        const Tensor x = random_tensor(rt, k.shape, dtype, -1.0, 2.0, 11);
        const std::vector<double> v = values(rt, x);
        std::vector<double> sums(size_t(columns), 0.0), squares(size_t(columns), 0.0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t j = 0; j < columns; ++j) {
            sums[size_t(j)] += v[size_t(r * columns + j)];
            squares[size_t(j)] += v[size_t(r * columns + j)] * v[size_t(r * columns + j)];
          }
        std::vector<double> means = sums, norms = squares;
        for (double& m : means) m /= double(rows);
        for (double& n : norms) n = std::sqrt(n);
        const double tolerance = dtype == DType::f32 ? 1e-4 : 1e-12;
        const Tensor sum = rt.call1("sum", {x}, {{"dims", k.dims}});
        require_close(rt, sum, sums, tolerance, tolerance);
        require_close(rt, rt.call1("mean", {x}, {{"dims", k.dims}}), means, tolerance, tolerance);
        require_close(rt, rt.call1("norm", {x}, {{"dims", k.dims}}), norms, tolerance, tolerance);
        require_close(rt, rt.call1("sum_to", {x}, {{"shape", std::vector<int64_t>{columns}}}), sums, tolerance,
                      tolerance);
        if (threads == 1) first_threads = values(rt, sum);
        CHECK(values(rt, sum) == first_threads);  // blocks are added in the same order whatever the threads
      }
    }
  }
}
