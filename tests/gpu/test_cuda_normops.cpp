// group_norm, instance_norm, upsampling, 1-d pools, bmm and baddbmm on
// cuda:0 against the CPU kernels, forward and backward.
#include <catch2/catch.hpp>

#include "cpu_reference.hpp"

using namespace kiln;
using namespace kiln::test;

namespace {

using Ints = std::vector<int64_t>;
using Reals = std::vector<double>;

const DType kFloatDTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

}  // namespace

TEST_CASE("group_norm and instance_norm on cuda:0 match the CPU", "[gpu][group_norm]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  const std::vector<std::pair<Shape, int64_t>> cases = {
      {{4, 6}, 3}, {{2, 8, 5}, 4}, {{3, 6, 4, 5}, 2}, {{2, 64, 17, 19}, 8}};
  for (DType dtype : {DType::f32, DType::f64})
    for (const auto& [s, groups] : cases) {
      INFO(to_string(s) << " groups " << groups);
      const Shape channels{s[1]};
      const int64_t g = groups;
      check_against_cpu(
          rt,
          [g](Runtime& r, const std::vector<Tensor>& in) {
            return r.call1("group_norm", {in[0], in[1], in[2]}, {{"num_groups", g}});
          },
          {s, channels, channels}, dtype, tolerance_for(dtype));
      check_against_cpu(
          rt,
          [g](Runtime& r, const std::vector<Tensor>& in) {
            return r.call1("group_norm", {in[0]}, {{"num_groups", g}});
          },
          {s}, dtype, tolerance_for(dtype));
      if (s.rank() >= 3)
        check_against_cpu(
            rt,
            [](Runtime& r, const std::vector<Tensor>& in) {
              return r.call1("instance_norm", {in[0], in[1], in[2]});
            },
            {s, channels, channels}, dtype, tolerance_for(dtype));
    }
}

TEST_CASE("upsampling on cuda:0 matches the CPU", "[gpu][upsample]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kFloatDTypes)
    for (const Shape& s : {Shape{2, 3, 4, 5}, Shape{1, 2, 7, 3}}) {
      INFO(to_string(s));
      const auto nearest = [](Ints size, Reals scale) {
        return [=](Runtime& r, const std::vector<Tensor>& in) {
          return r.call1("upsample_nearest2d", {in[0]}, {{"size", size}, {"scale_factor", scale}});
        };
      };
      const auto bilinear = [](Ints size, Reals scale, bool align_corners) {
        return [=](Runtime& r, const std::vector<Tensor>& in) {
          return r.call1("upsample_bilinear2d", {in[0]},
                         {{"size", size}, {"scale_factor", scale}, {"align_corners", align_corners}});
        };
      };
      check_against_cpu(rt, nearest({9, 11}, {}), {s}, dtype, tolerance_for(dtype));
      check_against_cpu(rt, nearest({}, {2.5, 0.5}), {s}, dtype, tolerance_for(dtype));
      check_against_cpu(rt, bilinear({9, 11}, {}, false), {s}, dtype, tolerance_for(dtype));
      check_against_cpu(rt, bilinear({3, 8}, {}, true), {s}, dtype, tolerance_for(dtype));
      check_against_cpu(rt, bilinear({}, {1.7, 2.0}, false), {s}, dtype, tolerance_for(dtype));
    }
}

TEST_CASE("1-d pools on cuda:0 match the CPU", "[gpu][pool1d]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : kFloatDTypes) {
    check_against_cpu(
        rt,
        [](Runtime& r, const std::vector<Tensor>& in) {
          return r.call1("max_pool1d", {in[0]}, {{"kernel_size", Ints{3}}, {"stride", Ints{2}}, {"padding", Ints{1}}});
        },
        {{2, 3, 11}}, dtype, tolerance_for(dtype));
    check_against_cpu(
        rt,
        [](Runtime& r, const std::vector<Tensor>& in) {
          return r.call1("avg_pool1d", {in[0]}, {{"kernel_size", Ints{4}}, {"ceil_mode", true}});
        },
        {{2, 3, 11}}, dtype, tolerance_for(dtype));
  }
}

TEST_CASE("bmm and baddbmm on cuda:0 match the CPU", "[gpu][bmm]") {
  Runtime rt;
  if (skip_without_gpu(rt)) return;
  for (DType dtype : {DType::f32, DType::f64}) {
    check_against_cpu(
        rt,
        [](Runtime& r, const std::vector<Tensor>& in) {
          return r.call1("bmm", {in[0], in[1]});
        },
        {{3, 4, 5}, {3, 5, 6}}, dtype, tolerance_for(dtype));
    check_against_cpu(
        rt,
        [](Runtime& r, const std::vector<Tensor>& in) {
          return r.call1("baddbmm", {in[0], in[1], in[2]}, {{"beta", 0.5}, {"alpha", 2.0}});
        },
        {{6}, {3, 4, 5}, {3, 5, 6}}, dtype, tolerance_for(dtype));
  }
}
