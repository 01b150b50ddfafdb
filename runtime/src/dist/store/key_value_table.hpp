// The store server's keys and values, and the requests waiting for keys to
// be set. It knows nothing of sockets: the server calls it from its one
// thread, so nothing here locks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::dist {

class KeyValueTable {
 public:
  using WatchId = uint64_t;

  // nullptr when `key` is not set; valid until the next change.
  const std::string* find(const std::string& key) const;
  void set(const std::string& key, std::string value);
  // Adds to the decimal integer at `key` (a missing key is 0), stores the
  // sum as decimal text and returns it. Throws Status::invalid_argument
  // naming the key when its value is not an integer or the sum overflows.
  int64_t add(const std::string& key, int64_t delta);
  // Sets `key` to `desired` when it holds `expected`; an empty `expected`
  // also matches a missing key. Returns the value held afterwards (empty
  // when the key is still missing).
  std::string compare_set(const std::string& key, const std::string& expected, std::string desired);
  bool remove(const std::string& key);
  // The keys of `keys` that are not set, in their order.
  std::vector<std::string> missing(const std::vector<std::string>& keys) const;

  // Calls `on_ready` once, from inside the change after which every key of
  // `keys` is set; the watch is gone by then. The caller checks first that
  // some key is missing.
  WatchId watch(std::vector<std::string> keys, std::function<void()> on_ready);
  // Forgets a watch that has not fired; an unknown id does nothing.
  void unwatch(WatchId id);
  size_t watch_count() const { return watches_.size(); }

 private:
  struct Watch {
    std::vector<std::string> keys;  // sorted, each once
    size_t remaining;               // keys listened for and not set since
    std::function<void()> on_ready;
  };
  // Listens for the keys of `w` that are missing now.
  void listen(WatchId id, Watch& w);
  void key_changed(const std::string& key);

  std::unordered_map<std::string, std::string> values_;
  std::unordered_map<WatchId, Watch> watches_;
  std::unordered_map<std::string, std::vector<WatchId>> watchers_of_key_;
  WatchId next_watch_ = 1;
};

}  // namespace kiln::dist
