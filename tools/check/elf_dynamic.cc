#include "tools/check/elf_dynamic.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace graft::check {
namespace {

// Copies a T at `offset`, or fails when the file is too short: a vendor's
// file may be truncated or not what its name says.
template <typename T>
bool ReadAt(const std::string& data, uint64_t offset, T* out) {
  if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
  std::memcpy(out, data.data() + offset, sizeof(T));
  return true;
}

std::string StringAt(const std::string& data, uint64_t table, uint64_t size,
                     uint64_t index) {
  if (index >= size || table > data.size() || data.size() - table < size) {
    return "";
  }
  const char* begin = data.data() + table + index;
  return std::string(begin, strnlen(begin, size - index));
}

}  // namespace

absl::StatusOr<ElfDynamic> ReadElfDynamic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  const std::string data((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
  };
  Elf64_Ehdr eh;
  if (!ReadAt(data, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    return bad("not an ELF file");
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    return bad("not a 64-bit little-endian ELF file");
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return bad("odd section headers");
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (!ReadAt(data, eh.e_shoff + i * sizeof(Elf64_Shdr), &sections[i])) {
      return bad("truncated section headers");
    }
  }
  ElfDynamic out;
  bool have_dynsym = false;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNSYM && s.sh_type != SHT_DYNAMIC) continue;
    if (s.sh_link >= sections.size()) return bad("bad string table link");
    const Elf64_Shdr& strtab = sections[s.sh_link];
    if (s.sh_type == SHT_DYNSYM) {
      have_dynsym = true;
      for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size;
           off += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        if (!ReadAt(data, s.sh_offset + off, &sym)) return bad("truncated");
        const int bind = ELF64_ST_BIND(sym.st_info);
        const int vis = ELF64_ST_VISIBILITY(sym.st_other);
        if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0) continue;
        if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
        if (vis != STV_DEFAULT && vis != STV_PROTECTED) continue;
        out.exported.insert(
            StringAt(data, strtab.sh_offset, strtab.sh_size, sym.st_name));
      }
    } else {
      for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size;
           off += sizeof(Elf64_Dyn)) {
        Elf64_Dyn dyn;
        if (!ReadAt(data, s.sh_offset + off, &dyn)) return bad("truncated");
        if (dyn.d_tag == DT_NULL) break;
        if (dyn.d_tag == DT_NEEDED) {
          out.needed.push_back(
              StringAt(data, strtab.sh_offset, strtab.sh_size, dyn.d_un.d_val));
        }
      }
    }
  }
  if (!have_dynsym) return bad("no dynamic symbol table (.dynsym)");
  return out;
}

}  // namespace graft::check
