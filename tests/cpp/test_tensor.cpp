// kiln::Tensor: creation, queries, reads and writes, autograd state,
// wrapped host memory, and shared ownership.
#include <type_traits>
#include <vector>

#include "support.hpp"

static_assert(std::is_copy_constructible_v<kiln::Tensor> && std::is_nothrow_move_constructible_v<kiln::Tensor>);

TEST_CASE("Tensor factories give the shape, dtype and values asked for", "[tensor]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const kiln::Tensor z = kiln::Tensor::zeros(rt, {2, 3}, KILN_F64);
  CHECK(z.rank() == 2);
  CHECK(z.shape() == kiln::Shape{2, 3});
  CHECK(z.numel() == 6);
  CHECK(z.dtype() == KILN_F64);
  CHECK(z.device() == kiln::Device::cpu());
  CHECK(z.to_vector<double>() == std::vector<double>(6, 0.0));
  CHECK(kiln::Tensor::full(rt, {2}, 7.0, KILN_I32).to_vector<int32_t>() == std::vector<int32_t>{7, 7});
  CHECK(kiln::Tensor::empty(rt, {4, 1}, KILN_U8).shape() == kiln::Shape{4, 1});
  const kiln::Tensor scalar = kiln::Tensor::full(rt, {}, 2.5);
  CHECK(scalar.rank() == 0);
  CHECK(scalar.shape().empty());
  CHECK(scalar.item<float>() == 2.5f);
  const kiln::Tensor v = kiln::Tensor::from_data(rt, std::vector<int64_t>{1, 2, 3, 4}, {2, 2});
  CHECK(v.dtype() == KILN_I64);
  CHECK(v.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4});
  const float raw[3] = {1.0f, 2.0f, 3.0f};
  CHECK(kiln::Tensor::from_data(rt, raw, sizeof raw, {3}, KILN_F32).to_vector<float>() ==
        std::vector<float>{1.0f, 2.0f, 3.0f});
}

TEST_CASE("Tensor errors name what is wrong", "[tensor]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  REQUIRE_KILN_ERROR(kiln::Tensor::from_data(rt, std::vector<float>{1, 2, 3}, {2, 2}), KILN_ERR_INVALID_ARGUMENT, "12",
                     "16");
  REQUIRE_KILN_ERROR(kiln::Tensor::zeros(rt, {1, 1, 1, 1, 1, 1, 1, 1, 1}), KILN_ERR_INVALID_ARGUMENT, "rank 9");
  const kiln::Tensor t = kiln::Tensor::zeros(rt, {3});
  // The wrapper's own checks are reported like the library's.
  REQUIRE_KILN_ERROR(t.to_vector<double>(), KILN_ERR_DTYPE_MISMATCH, "to_vector<f64> on a tensor of f32");
  REQUIRE_KILN_ERROR(t.data<int64_t>(), KILN_ERR_DTYPE_MISMATCH, "data<i64> on a tensor of f32");
  REQUIRE_KILN_ERROR(t.item<float>(), KILN_ERR_SHAPE_MISMATCH, "one element", "has 3");
  float small[2];
  REQUIRE_KILN_ERROR(t.read(small, sizeof small), KILN_ERR_INVALID_ARGUMENT, "8");
  REQUIRE_KILN_ERROR(t.to(kiln::Device::cuda(rt.cuda_device_count() + 7)), KILN_ERR_DEVICE_MISMATCH, "cuda");
  const kiln::Tensor none(nullptr);
  REQUIRE_KILN_ERROR(none.numel(), KILN_ERR_INVALID_ARGUMENT, "NULL");
}

TEST_CASE("Tensor data, contiguous and assign write into the tensor itself", "[tensor]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Tensor t = kiln::Tensor::zeros(rt, {2, 2});
  t.data<float>()[3] = 5.0f;
  CHECK(t.to_vector<float>() == std::vector<float>{0, 0, 0, 5});
  CHECK(t.contiguous().get() == t.get());  // already contiguous: the tensor itself
  t.assign(kiln::Tensor::full(rt, {2, 2}, 1.5, KILN_F64));
  CHECK(t.to_vector<float>() == std::vector<float>(4, 1.5f));
  REQUIRE_KILN_ERROR(t.assign(kiln::Tensor::zeros(rt, {3})), KILN_ERR_SHAPE_MISMATCH, "[3]");
  const kiln::Tensor same = t.to(kiln::Device::cpu());
  CHECK(same.get() == t.get());
}

TEST_CASE("Tensor autograd: requires_grad, backward, grad, detach, no-grad scopes", "[tensor][autograd]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  kiln::Tensor w = kiln::Tensor::from_data(rt, std::vector<float>{1, 2, 3}, {3});
  CHECK_FALSE(w.requires_grad());
  CHECK_FALSE(w.grad());
  w.set_requires_grad();
  CHECK(w.requires_grad());
  const kiln::Op mul(rt, "mul"), sum(rt, "sum");
  const kiln::Tensor loss = sum({mul({w, w})});  // sum(w^2): gradient 2w
  kiln::backward(rt, loss);
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 4, 6});
  REQUIRE_KILN_ERROR(kiln::backward(rt, loss), KILN_ERR_INVALID_STATE, "backward");
  w.zero_grad();
  CHECK_FALSE(w.grad());
  const kiln::Tensor d = w.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.to_vector<float>() == w.to_vector<float>());

  CHECK(kiln::grad_enabled(rt));
  {
    const kiln::NoGrad no_grad(rt);
    CHECK_FALSE(kiln::grad_enabled(rt));
    {
      const kiln::NoGrad nested(rt);
      CHECK_FALSE(kiln::grad_enabled(rt));
    }
    CHECK_FALSE(kiln::grad_enabled(rt));
    CHECK_FALSE(mul({w, w}).requires_grad());
  }
  CHECK(kiln::grad_enabled(rt));
  CHECK(mul({w, w}).requires_grad());
}

TEST_CASE("Tensor copies share the tensor, and wrapped memory is released after the last", "[tensor][lifetime]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  std::vector<float> memory{1, 2, 3, 4};
  int releases = 0;
  kiln::Tensor a =
      kiln::Tensor::wrap(rt, memory.data(), memory.size() * sizeof(float), {4}, KILN_F32, [&releases] { ++releases; });
  memory[0] = 9.0f;  // no copy: the tensor reads the host's memory
  CHECK(a.to_vector<float>()[0] == 9.0f);
  kiln::Tensor b = a;
  CHECK(b.get() == a.get());
  kiln::Tensor view = a.detach();  // another tensor on the same memory
  kiln::Tensor moved(std::move(a));
  CHECK_FALSE(a);
  CHECK(moved.get() == b.get());
  b = kiln::Tensor(nullptr);
  moved = kiln::Tensor(nullptr);
  CHECK(releases == 0);  // the view still holds the memory
  view = kiln::Tensor(nullptr);
  CHECK(releases == 1);

  // A failed wrap does not call on_release, and the memory stays the host's.
  REQUIRE_KILN_ERROR(kiln::Tensor::wrap(rt, memory.data(), 2, {4}, KILN_F32, [&releases] { ++releases; }),
                     KILN_ERR_INVALID_ARGUMENT, "16");
  CHECK(releases == 1);
}

TEST_CASE("Tensor on_release that throws does not take the host down", "[tensor][lifetime]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  float value = 1.0f;
  bool called = false;
  {
    const kiln::Tensor t = kiln::Tensor::wrap(rt, &value, sizeof value, {1}, KILN_F32, [&called] {
      called = true;
      throw std::runtime_error("thrown while kiln releases the memory");
    });
  }
  CHECK(called);
}

TEST_CASE("Tensor adopts and retains handles of the C API", "[tensor]") {
  kiln::Runtime rt = kiln_test::make_runtime();
  const int64_t shape[1] = {2};
  kiln_tensor* raw = nullptr;
  REQUIRE(kiln_tensor_full(rt.get(), shape, 1, 4.0, KILN_F32, KILN_DEVICE_CPU, 0, &raw) == KILN_OK);
  const kiln::Tensor retained = kiln::Tensor::retain(raw);
  kiln_tensor_release(raw);  // the C code drops its reference; the wrapper keeps its own
  CHECK(retained.to_vector<float>() == std::vector<float>{4, 4});
  kiln_tensor* copy = nullptr;
  REQUIRE(kiln_tensor_detach(retained.get(), &copy) == KILN_OK);
  const kiln::Tensor adopted = kiln::Tensor::adopt(copy);
  CHECK(adopted.numel() == 2);
}
