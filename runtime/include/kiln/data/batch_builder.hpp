// Batch assembly: each field of a batch is the examples' field stacked along
// a new first dimension. The batch's tensors are allocated once, when the
// first example arrives, and every example is copied straight into its row,
// so an example's memory can go as soon as it is added.
#pragma once

#include <cstdint>
#include <memory>

#include "kiln/data/named_tensors.hpp"
#include "kiln/memory/allocator.hpp"

namespace kiln::data {

class BatchBuilder {
 public:
  // A batch of `batch_size` examples in memory from `memory` (a CPU allocator).
  BatchBuilder(int64_t batch_size, std::shared_ptr<Allocator> memory);

  // Copies the fields of example `index` into the next row. Throws when its
  // fields differ from the batch's first example in names, shape or dtype
  // (the message names both examples), or when the batch is full.
  void add(int64_t index, const NamedTensors& example);

  // The stacked fields; every row must have been added.
  NamedTensors finish();

 private:
  void allocate_like(const NamedTensors& first);
  void check_fields(int64_t index, const NamedTensors& example) const;

  int64_t batch_size_;
  std::shared_ptr<Allocator> memory_;
  int64_t rows_ = 0;
  int64_t first_index_ = -1;  // the example whose fields the others must match
  NamedTensors batch_;
};

}  // namespace kiln::data
