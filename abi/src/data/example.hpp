// What a kiln_example handle is: an ordered list of named CPU tensors. Each
// field holds its own reference on its tensor; the example holds one on its
// runtime. A mutex makes concurrent calls on one example safe, though the
// data pipeline gives each example to one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/kiln.h"

struct kiln_example {
  explicit kiln_example(kiln_runtime* rt);
  ~kiln_example();
  kiln_example(const kiln_example&) = delete;
  kiln_example& operator=(const kiln_example&) = delete;

  struct Field {
    std::string name;
    kiln_tensor* tensor;  // one reference, owned by the example
  };

  std::atomic<int64_t> refs{1};
  kiln_runtime* runtime;
  mutable std::mutex mutex;
  std::vector<Field> fields;  // in the order they were first set
};
