// Gloo meets its peers through a gloo::rendezvous::Store; this one forwards
// to kiln's store, so one TCP store serves the whole job.
#pragma once

#include <gloo/rendezvous/store.h>

#include <string>
#include <vector>

#include "kiln/dist/store.hpp"

namespace kiln::dist {

class GlooStore final : public gloo::rendezvous::Store {
 public:
  explicit GlooStore(dist::Store& store) : store_(store) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(key, std::string(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    std::string value = store_.get(key);
    return std::vector<char>(value.begin(), value.end());
  }
  void wait(const std::vector<std::string>& keys) override { store_.wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_.wait(keys, timeout);
  }

 private:
  dist::Store& store_;
};

}  // namespace kiln::dist
