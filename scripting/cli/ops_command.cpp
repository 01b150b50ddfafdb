// kiln ops [NAME]: the ops of a default runtime (built in, and those of the
// plugins it loads, as kiln run loads them), one block each:
//
//   split (built-in)
//     inputs: input
//     attributes: dim: int = 0, sizes: ints (required)
//     backward: yes
//     kernels: cpu f32, f64, f16, bf16, i32, i64, u8, bool; cuda none
#include <cstdio>
#include <string>
#include <vector>

#include "command.hpp"
#include "text_wrap.hpp"

namespace kiln::cli {
namespace {

constexpr const char* kAttrTypeNames[] = {"int", "float", "bool", "ints", "floats", "string", "dtype", "tensor"};
constexpr const char* kDTypeNames[] = {"f32", "f64", "f16", "bf16", "i32", "i64", "u8", "bool"};

std::string dtype_list(uint32_t bits) {
  std::string out;
  for (unsigned d = 0; d < std::size(kDTypeNames); ++d)
    if (bits & (1u << d)) out += (out.empty() ? "" : ", ") + std::string(kDTypeNames[d]);
  return out.empty() ? "none" : out;
}

// Prints one op's block; false when the runtime cannot describe it.
bool print_op(const kiln_op* op) {
  kiln_op_info info{};
  info.size = sizeof info;
  if (kiln_op_info_get(op, &info) != KILN_OK) return false;
  std::vector<std::string> inputs, attrs;
  for (size_t i = 0; i < info.num_inputs; ++i) {
    kiln_op_input_info input{};
    input.size = sizeof input;
    if (kiln_op_input_get(op, i, &input) != KILN_OK) return false;
    inputs.push_back(std::string(input.name) + (input.optional ? " (optional)" : "") +
                     (input.variadic ? " (any number)" : ""));
  }
  for (size_t i = 0; i < info.num_attrs; ++i) {
    kiln_op_attr_info attr{};
    attr.size = sizeof attr;
    if (kiln_op_attr_get(op, i, &attr) != KILN_OK) return false;
    attrs.push_back(std::string(attr.name) + ": " + kAttrTypeNames[attr.type] +
                    (attr.required ? " (required)" : std::string(" = ") + attr.default_text));
  }
  std::printf("%s (%s)\n", info.name, info.plugin[0] ? ("plugin " + std::string(info.plugin)).c_str() : "built-in");
  std::fputs(inputs.empty() ? "  inputs: none\n" : wrap_list("  inputs: ", inputs).c_str(), stdout);
  std::fputs(attrs.empty() ? "  attributes: none\n" : wrap_list("  attributes: ", attrs).c_str(), stdout);
  std::printf("  backward: %s%s%s\n", info.has_backward ? "yes" : "no",
              info.is_view ? "; a view of its input where the layout allows" : "",
              info.writes_inputs ? "; updates its inputs in place" : "");
  std::printf("  kernels: cpu %s; cuda %s\n", dtype_list(info.cpu_dtypes).c_str(),
              dtype_list(info.cuda_dtypes).c_str());
  return true;
}

}  // namespace

int ops_command(const Command& self, Args args) {
  if (args.size() > 1) return usage_error(self, "takes at most one op name, got '" + std::string(args[1]) + "' too");
  const RuntimePtr rt = open_runtime(self, nullptr);
  if (!rt) return kExitFailure;
  if (args.size() == 1) {
    const std::string name(args.front());
    const kiln_op* op = nullptr;
    if (kiln_op_find(rt.get(), name.c_str(), &op) != KILN_OK) return library_failure(self, "no op '" + name + "'");
    return print_op(op) ? kExitOk : library_failure(self, "cannot describe op '" + name + "'");
  }
  size_t count = 0;
  if (kiln_op_count(rt.get(), &count) != KILN_OK) return library_failure(self, "cannot count the ops");
  for (size_t i = 0; i < count; ++i) {
    const kiln_op* op = nullptr;
    if (i > 0) std::putchar('\n');
    if (kiln_op_at(rt.get(), i, &op) != KILN_OK || !print_op(op))
      return library_failure(self, "cannot describe op " + std::to_string(i));
  }
  return kExitOk;
}

}  // namespace kiln::cli
