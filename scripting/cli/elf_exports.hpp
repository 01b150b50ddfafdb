// The symbols a shared library exports: the defined global and weak entries
// of its ELF dynamic symbol table, read from the file with <elf.h> alone.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

// The exported symbol names of the ELF shared library at `path` (64-bit,
// host byte order), without the ones the linker defines itself (_init,
// _fini, _edata, ...). nullopt with *error set when the file is not such a
// library.
std::optional<std::vector<std::string>> elf_exported_symbols(const std::string& path, std::string* error);

}  // namespace kiln::cli
