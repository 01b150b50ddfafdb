#include "ops/torch/fixture_file.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "kiln/checkpoint/safetensors.hpp"
#include "kiln/error.hpp"

namespace kiln::test {
namespace {

constexpr std::string_view kExtension = ".safetensors";

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  size_t begin = 0;
  for (size_t comma = text.find(','); comma != std::string::npos; comma = text.find(',', begin)) {
    out.push_back(text.substr(begin, comma - begin));
    begin = comma + 1;
  }
  out.push_back(text.substr(begin));
  return out;
}

int parse_count(const std::string& text, const std::string& what) {
  size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(text, &used);
  } catch (const std::exception&) {
  }
  KILN_CHECK(n >= 0 && used == text.size(), Status::io, what, " must be a count, got '", text, "'");
  return n;
}

class FixtureReader {
 public:
  FixtureReader(Runtime& rt, const std::string& path) : rt_(rt), file_(path) {
    for (const auto& [key, value] : file_.header().metadata) meta_[key] = value;
  }

  const std::string& meta(const std::string& key) const {
    auto it = meta_.find(key);
    KILN_CHECK(it != meta_.end(), Status::io, file_.path(), ": no metadata '", key, "'");
    return it->second;
  }

  // The tensor `name`, or an undefined one when the file has none.
  Tensor tensor(const std::string& name) const {
    const checkpoint::TensorEntry* entry = file_.find(name);
    if (!entry) return Tensor();
    Tensor t = rt_.empty(entry->shape, entry->dtype);
    if (entry->end > entry->begin) file_.read(*entry, t.raw_data());
    return t;
  }

  Tensor required_tensor(const std::string& name) const {
    Tensor t = tensor(name);
    KILN_CHECK(t.defined(), Status::io, file_.path(), ": no tensor '", name, "'");
    return t;
  }

  FixtureCase read_case(int i) const {
    const std::string prefix = std::to_string(i) + ".";
    FixtureCase c;
    c.index = i;
    c.label = meta(prefix + "label");
    c.input_names = split_list(meta(prefix + "inputs"));
    for (const std::string& name : c.input_names) {
      c.inputs.push_back(tensor(prefix + "in." + name));
      c.grads.push_back(tensor(prefix + "grad." + name));
    }
    const std::string attr_prefix = prefix + "attr.";
    for (const auto& [key, value] : meta_)
      if (key.starts_with(attr_prefix)) c.attrs.emplace_back(key.substr(attr_prefix.size()), value);
    const int outputs = parse_count(meta(prefix + "outputs"), file_.path() + ": " + prefix + "outputs");
    for (int k = 0; k < outputs; ++k) {
      c.outputs.push_back(required_tensor(prefix + "out." + std::to_string(k)));
      c.weights.push_back(tensor(prefix + "weight." + std::to_string(k)));
    }
    return c;
  }

 private:
  Runtime& rt_;
  checkpoint::SafetensorsReader file_;
  std::map<std::string, std::string> meta_;
};

}  // namespace

bool FixtureCase::checks_gradients() const {
  return std::any_of(weights.begin(), weights.end(), [](const Tensor& w) { return w.defined(); });
}

std::string fixture_folder() { return KILN_TORCH_FIXTURES_DIR; }

std::vector<std::string> fixture_paths() {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(fixture_folder()))
    if (entry.path().extension() == kExtension) paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string fixture_op_name(const std::string& path) { return std::filesystem::path(path).stem().string(); }

FixtureFile read_fixture(Runtime& rt, const std::string& path) {
  FixtureReader reader(rt, path);
  FixtureFile file;
  file.path = path;
  file.op = reader.meta("op");
  file.torch_version = reader.meta("torch");
  const int cases = parse_count(reader.meta("cases"), path + ": cases");
  for (int i = 0; i < cases; ++i) file.cases.push_back(reader.read_case(i));
  return file;
}

}  // namespace kiln::test
