#include "kiln/tensor.hpp"

#include "kiln/error.hpp"

namespace kiln {

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::shared_ptr<Allocator>& allocator) {
  for (int64_t d : shape)
    KILN_CHECK(d >= 0, Status::invalid_argument, "negative dimension in shape ", to_string(shape));
  const int64_t n = shape.numel();
  KILN_CHECK(n <= INT64_MAX / 8, Status::invalid_argument, "shape ", to_string(shape), " is too large");
  const size_t bytes = size_t(n) * dtype_size(dtype);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(allocator->allocate(bytes), bytes, allocator->device(), allocator);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype) {
  KILN_CHECK(size_t(shape.numel()) * dtype_size(dtype) <= storage->nbytes(), Status::invalid_argument,
             "a ", dtype_name(dtype), to_string(shape), " tensor needs ", shape.numel() * int64_t(dtype_size(dtype)),
             " bytes, the buffer has ", storage->nbytes());
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = rank() - 1; i >= 0; --i) {
    const int64_t d = impl_->shape[i];
    if (d == 1) continue;
    if (impl_->strides[i] != expected) return false;
    expected *= d;
  }
  return true;
}

Tensor Tensor::detach() const {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->shape = impl_->shape;
  impl->strides = impl_->strides;
  impl->offset = impl_->offset;
  impl->dtype = impl_->dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::view_as(const Shape& shape, const Shape& strides, int64_t offset) const {
  Tensor v = detach();
  v.impl_->shape = shape;
  v.impl_->strides = strides;
  v.impl_->offset = offset;
  return v;
}

uint64_t Tensor::add_grad_hook(std::function<void(const Tensor&)> hook) {
  KILN_CHECK(is_leaf() && requires_grad(), Status::invalid_state,
             "a gradient hook goes on a leaf that requires grad; this tensor ",
             is_leaf() ? "does not require grad" : "was computed by an op");
  AutogradMeta& meta = impl_->autograd;
  if (!meta.grad_hooks) meta.grad_hooks = std::make_shared<GradHooks>();
  uint64_t id = meta.grad_hooks->next_id++;
  meta.grad_hooks->hooks.emplace_back(id, std::move(hook));
  return id;
}

void Tensor::remove_grad_hook(uint64_t id) {
  std::shared_ptr<GradHooks>& hooks = impl_->autograd.grad_hooks;
  KILN_CHECK(hooks && std::erase_if(hooks->hooks, [&](const auto& h) { return h.first == id; }) == 1,
             Status::not_found, "no gradient hook ", id, " on this tensor");
}

void Tensor::set_requires_grad(bool value) {
  KILN_CHECK(!value || is_floating(dtype()), Status::dtype_mismatch,
             "only floating-point tensors can require gradients; this one is ", dtype_name(dtype()));
  KILN_CHECK(is_leaf(), Status::invalid_state,
             "requires_grad can only be changed on a leaf tensor; this one was computed by an op (detach it first)");
  impl_->autograd.requires_grad = value;
}

std::string describe(const Tensor& t) {
  if (!t.defined()) return "undefined tensor";
  return str_cat(dtype_name(t.dtype()), to_string(t.shape()), " on ", to_string(t.device()));
}

}  // namespace kiln
