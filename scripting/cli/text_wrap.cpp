#include "text_wrap.hpp"

namespace kiln::cli {

std::string wrap_list(const std::string& lead, const std::vector<std::string>& items, size_t width) {
  const std::string indent(lead.size(), ' ');
  std::string text = lead;
  size_t line_length = lead.size();
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    const bool first_on_line = line_length == lead.size();
    if (!first_on_line && line_length + 1 + item.size() > width) {
      text += "\n" + indent;
      line_length = indent.size();
    } else if (!first_on_line) {
      text += ' ';
      ++line_length;
    }
    text += item;
    line_length += item.size();
  }
  return text + "\n";
}

}  // namespace kiln::cli
