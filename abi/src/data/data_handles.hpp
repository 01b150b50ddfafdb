// What kiln_data_source and kiln_transform handles are: a plugin object
// with a reference count (and, for a source, its length, fixed at creation).
#pragma once

#include <atomic>
#include <cstdint>

#include "plugin/plugin_object.hpp"

struct kiln_data_source {
  kiln_data_source(kiln_runtime* rt, std::shared_ptr<const kiln::abi::DataSourceEntry> entry, const kiln_attr* config,
                   size_t n_config)
      : object(rt, std::move(entry), config, n_config, "data source") {}

  std::atomic<int64_t> refs{1};
  kiln::abi::PluginObject<kiln::abi::DataSourceEntry> object;
  int64_t length = 0;
};

struct kiln_transform {
  kiln_transform(kiln_runtime* rt, std::shared_ptr<const kiln::abi::TransformEntry> entry, const kiln_attr* config,
                 size_t n_config)
      : object(rt, std::move(entry), config, n_config, "transform") {}

  std::atomic<int64_t> refs{1};
  kiln::abi::PluginObject<kiln::abi::TransformEntry> object;
};
