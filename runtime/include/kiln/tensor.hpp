// Tensor: a reference-counted handle on a TensorImpl, which views a Storage
// through a shape, strides (in elements) and an offset. Copying a Tensor
// copies the handle, never the data. Views (reshape, permute, slice) share the
// storage; ops that need dense input get a contiguous copy from the
// dispatcher.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/memory/allocator.hpp"
#include "kiln/shape.hpp"

namespace kiln {

class Node;
class Tensor;
struct GradHooks;

// Autograd state of one tensor. A leaf that requires grad has no grad_fn and
// receives its gradient in `grad`; a computed tensor points at the node that
// made it and which of its outputs it is.
struct AutogradMeta {
  bool requires_grad = false;
  std::shared_ptr<struct TensorImpl> grad;
  std::shared_ptr<Node> grad_fn;
  int output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;  // shared by every use of a leaf in one graph
  std::shared_ptr<GradHooks> grad_hooks;  // see Tensor::add_grad_hook; usually none
};

struct GradHooks {
  uint64_t next_id = 1;
  std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> hooks;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;
  int64_t offset = 0;  // in elements
  DType dtype = DType::f32;
  AutogradMeta autograd;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // A contiguous tensor over fresh storage from `allocator` (contents undefined).
  static Tensor empty(const Shape& shape, DType dtype, const std::shared_ptr<Allocator>& allocator);
  // A contiguous tensor over memory the caller owns; `storage` frees it.
  static Tensor from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype);

  bool defined() const { return impl_ != nullptr; }
  explicit operator bool() const { return defined(); }

  const Shape& shape() const { return impl_->shape; }
  const Shape& strides() const { return impl_->strides; }
  int rank() const { return impl_->shape.rank(); }
  int64_t dim(int i) const { return impl_->shape.at(i); }
  int64_t numel() const { return impl_->shape.numel(); }
  int64_t offset() const { return impl_->offset; }
  DType dtype() const { return impl_->dtype; }
  Device device() const { return impl_->storage->device(); }
  size_t element_size() const { return dtype_size(impl_->dtype); }
  size_t nbytes() const { return size_t(numel()) * element_size(); }
  bool is_contiguous() const;

  // Address of the first element (offset applied).
  void* raw_data() const {
    return static_cast<char*>(impl_->storage->data()) + impl_->offset * int64_t(element_size());
  }
  template <class T> T* data() const { return static_cast<T*>(raw_data()); }

  const std::shared_ptr<Storage>& storage() const { return impl_->storage; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // A new handle on the same data and view, with no autograd history.
  Tensor detach() const;
  // A view on the same storage with another shape, strides and offset.
  Tensor view_as(const Shape& shape, const Shape& strides, int64_t offset) const;

  // Autograd. requires_grad may only be set on floating-point leaves.
  bool requires_grad() const { return impl_->autograd.requires_grad; }
  void set_requires_grad(bool value);
  Tensor grad() const { return Tensor(impl_->autograd.grad); }
  void set_grad(const Tensor& g) { impl_->autograd.grad = g.impl_; }
  const std::shared_ptr<Node>& grad_fn() const { return impl_->autograd.grad_fn; }
  bool is_leaf() const { return impl_->autograd.grad_fn == nullptr; }

  bool same(const Tensor& other) const { return impl_ == other.impl_; }

  // Gradient-ready hooks of a leaf that requires grad: `hook` runs (on the
  // thread running backward) each time a backward pass has summed every
  // contribution into this leaf's .grad, with the leaf. Data-parallel
  // training starts reducing a gradient there, while backward goes on. An
  // exception from a hook fails that backward. Returns an id for
  // remove_grad_hook.
  uint64_t add_grad_hook(std::function<void(const Tensor&)> hook);
  void remove_grad_hook(uint64_t id);

 private:
  std::shared_ptr<TensorImpl> impl_;
};

std::string describe(const Tensor& t);  // "f32[2, 3] on cpu"

}  // namespace kiln
