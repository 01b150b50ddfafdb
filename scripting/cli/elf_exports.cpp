#include "elf_exports.hpp"

#include <elf.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace kiln::cli {
namespace {

// Defined by the linker in every shared library, not by the plugin's code
// (the same list as cmake/check_exports.cmake ignores).
constexpr std::array<std::string_view, 5> kLinkerDefined = {"_init", "_fini", "__bss_start", "_edata", "_end"};

// A struct of type T at `offset` in `bytes`, or nullopt past the end.
template <typename T>
std::optional<T> read_at(const std::vector<char>& bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

bool is_exported(const Elf64_Sym& sym) {
  const unsigned bind = ELF64_ST_BIND(sym.st_info);
  const unsigned visibility = ELF64_ST_VISIBILITY(sym.st_other);
  return sym.st_shndx != SHN_UNDEF && (bind == STB_GLOBAL || bind == STB_WEAK) &&
         (visibility == STV_DEFAULT || visibility == STV_PROTECTED);
}

}  // namespace

std::optional<std::vector<std::string>> elf_exported_symbols(const std::string& path, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot open '" + path + "'";
    return std::nullopt;
  }
  const std::vector<char> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const auto header = read_at<Elf64_Ehdr>(bytes, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0) {
    *error = "'" + path + "' is not an ELF file";
    return std::nullopt;
  }
  const unsigned char host_order = std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB;
  if (header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != host_order ||
      header->e_shentsize != sizeof(Elf64_Shdr)) {
    *error = "'" + path + "' is not a 64-bit ELF file in this machine's byte order";
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (unsigned s = 0; s < header->e_shnum; ++s) {
    const auto section = read_at<Elf64_Shdr>(bytes, header->e_shoff + uint64_t(s) * sizeof(Elf64_Shdr));
    if (!section) break;
    if (section->sh_type != SHT_DYNSYM) continue;
    const auto strings =
        read_at<Elf64_Shdr>(bytes, header->e_shoff + uint64_t(section->sh_link) * sizeof(Elf64_Shdr));
    if (!strings || strings->sh_offset > bytes.size()) break;
    const std::string_view table(bytes.data() + strings->sh_offset,
                                 std::min<uint64_t>(strings->sh_size, bytes.size() - strings->sh_offset));
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= section->sh_size; at += sizeof(Elf64_Sym)) {
      const auto sym = read_at<Elf64_Sym>(bytes, section->sh_offset + at);
      if (!sym || sym->st_name >= table.size()) break;
      if (!is_exported(*sym)) continue;
      const std::string_view name = table.substr(sym->st_name, table.find('\0', sym->st_name) - sym->st_name);
      if (std::find(kLinkerDefined.begin(), kLinkerDefined.end(), name) == kLinkerDefined.end())
        names.emplace_back(name);
    }
    return names;
  }
  *error = "'" + path + "' has no dynamic symbol table";
  return std::nullopt;
}

}  // namespace kiln::cli
