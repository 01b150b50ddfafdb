#include "checkpoint/tensor_file.hpp"

#include <algorithm>
#include <unordered_set>

#include "kiln/error.hpp"
#include "kiln/util/str_cat.hpp"
#include "tensor_assign.hpp"

namespace kiln::abi {
namespace {

// `t` as a dense tensor in host memory (the tensor itself when it already is one).
Tensor on_host(Runtime& rt, const Tensor& t) {
  Tensor host = t;
  if (!host.device().is_cpu()) {
    const OpDef& to = rt.op("to");
    host = rt.call1(to, {host}, to.make_attrs({{"device", std::string("cpu")}}));
  }
  return rt.contiguous(host);
}

// "a, b, c" for at most `limit` names, then how many more.
std::string name_list(const std::vector<std::string>& names, size_t limit = 8) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < limit; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > limit) out += str_cat(" and ", names.size() - limit, " more");
  return out;
}

}  // namespace

void save_named_tensors(Runtime& rt, const std::string& path, const StateTensors& tensors,
                        const checkpoint::Metadata& metadata) {
  std::vector<Tensor> host;  // keeps the host copies alive while they are written
  std::vector<checkpoint::TensorBytes> bytes;
  host.reserve(tensors.size());
  bytes.reserve(tensors.size());
  for (const StateTensor& t : tensors) {
    KILN_CHECK(t.tensor.defined(), Status::invalid_argument, "tensor '", t.name, "' is undefined");
    host.push_back(on_host(rt, t.tensor));
    bytes.push_back({t.name, host.back().dtype(), host.back().shape(), host.back().raw_data()});
  }
  checkpoint::write_safetensors(path, bytes, metadata);
}

Tensor read_entry(Runtime& rt, const checkpoint::SafetensorsReader& file, const checkpoint::TensorEntry& entry) {
  Tensor t = rt.empty(entry.shape, entry.dtype);
  file.read(entry, t.raw_data());
  return t;
}

std::vector<Assignment> plan_assignments(Runtime& rt, const checkpoint::SafetensorsReader& file,
                                         const StateTensors& targets, std::string_view prefix, bool strict,
                                         std::string_view what) {
  std::vector<std::string> missing, mismatched;
  std::unordered_set<std::string> wanted;
  std::vector<std::pair<const StateTensor*, const checkpoint::TensorEntry*>> found;
  for (const StateTensor& t : targets) {
    const std::string key = str_cat(prefix, t.name);
    wanted.insert(key);
    const checkpoint::TensorEntry* entry = file.find(key);
    if (!entry) {
      missing.push_back(key);
    } else if (entry->shape != t.tensor.shape()) {
      mismatched.push_back(str_cat(key, " (the file has ", to_string(entry->shape), ", ", what, " has ",
                                   to_string(t.tensor.shape()), ")"));
    } else {
      found.emplace_back(&t, entry);
    }
  }
  std::vector<std::string> unexpected;
  for (const checkpoint::TensorEntry& e : file.header().tensors)
    if (e.name.starts_with(prefix) && !wanted.contains(e.name)) unexpected.push_back(e.name);

  KILN_CHECK(mismatched.empty(), Status::shape_mismatch, "'", file.path(), "' does not fit ", what, ": ",
             mismatched.size(), " tensor(s) differ in shape: ", name_list(mismatched));
  KILN_CHECK(!strict || (missing.empty() && unexpected.empty()), Status::invalid_argument, "'", file.path(),
             "' does not match ", what, ": ", missing.size(), " tensor(s) missing from the file",
             missing.empty() ? "" : ": ", name_list(missing), "; ", unexpected.size(),
             " unexpected tensor(s) in the file", unexpected.empty() ? "" : ": ", name_list(unexpected));

  std::vector<Assignment> plan;
  plan.reserve(found.size());
  for (const auto& [target, entry] : found) plan.push_back({target->tensor, read_entry(rt, file, *entry)});
  return plan;
}

void apply_assignments(Runtime& rt, const std::vector<Assignment>& assignments) {
  for (const Assignment& a : assignments) assign_values(rt, a.target, a.values);
}

}  // namespace kiln::abi
