#include "key_value_table.hpp"

#include <algorithm>
#include <charconv>

#include "kiln/error.hpp"
#include "store_protocol.hpp"

namespace kiln::dist {

const std::string* KeyValueTable::find(const std::string& key) const {
  const auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

void KeyValueTable::set(const std::string& key, std::string value) {
  values_[key] = std::move(value);
  key_changed(key);
}

int64_t KeyValueTable::add(const std::string& key, int64_t delta) {
  int64_t current = 0;
  if (const std::string* held = find(key)) {
    const char* end = held->data() + held->size();
    const auto [stop, err] = std::from_chars(held->data(), end, current);
    KILN_CHECK(err == std::errc() && stop == end && !held->empty(), Status::invalid_argument, "key ",
               wire::quoted(key), " holds ", wire::quoted(*held), ", which is not a 64-bit decimal integer");
  }
  int64_t sum = 0;
  KILN_CHECK(!__builtin_add_overflow(current, delta, &sum), Status::invalid_argument, "key ", wire::quoted(key),
             ": adding ", delta, " to ", current, " overflows a 64-bit integer");
  set(key, std::to_string(sum));
  return sum;
}

std::string KeyValueTable::compare_set(const std::string& key, const std::string& expected, std::string desired) {
  const std::string* held = find(key);
  const bool matches = held ? *held == expected : expected.empty();
  if (!matches) return held ? *held : std::string();
  set(key, std::move(desired));
  return *find(key);
}

bool KeyValueTable::remove(const std::string& key) { return values_.erase(key) > 0; }

std::vector<std::string> KeyValueTable::missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  for (const std::string& key : keys) {
    if (!values_.contains(key)) out.push_back(key);
  }
  return out;
}

KeyValueTable::WatchId KeyValueTable::watch(std::vector<std::string> keys, std::function<void()> on_ready) {
  const WatchId id = next_watch_++;
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  Watch& w = watches_.emplace(id, Watch{std::move(keys), 0, std::move(on_ready)}).first->second;
  listen(id, w);
  return id;
}

void KeyValueTable::listen(WatchId id, Watch& w) {
  const std::vector<std::string> absent = missing(w.keys);
  for (const std::string& key : absent) watchers_of_key_[key].push_back(id);
  w.remaining = absent.size();
}

void KeyValueTable::unwatch(WatchId id) {
  const auto it = watches_.find(id);
  if (it == watches_.end()) return;
  for (const std::string& key : it->second.keys) {
    const auto list = watchers_of_key_.find(key);
    if (list == watchers_of_key_.end()) continue;
    std::erase(list->second, id);
    if (list->second.empty()) watchers_of_key_.erase(list);
  }
  watches_.erase(it);
}

void KeyValueTable::key_changed(const std::string& key) {
  const auto list = watchers_of_key_.find(key);
  if (list == watchers_of_key_.end()) return;
  // Every watcher of `key` has now seen it set: the list goes, and each
  // watch has one key less to wait for.
  const std::vector<WatchId> watchers = std::move(list->second);
  watchers_of_key_.erase(list);
  // Take the ready watches out first: their callbacks may watch or unwatch.
  std::vector<std::function<void()>> ready;
  for (const WatchId id : watchers) {
    const auto w = watches_.find(id);
    if (w == watches_.end() || --w->second.remaining > 0) continue;
    // A key seen earlier may have been deleted since: wait for it again.
    listen(id, w->second);
    if (w->second.remaining > 0) continue;
    ready.push_back(std::move(w->second.on_ready));
    watches_.erase(w);
  }
  for (const std::function<void()>& fire : ready) fire();
}

}  // namespace kiln::dist
