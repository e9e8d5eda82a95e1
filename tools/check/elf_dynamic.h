// ReadElfDynamic: what a shared library's dynamic section says, read from
// the file itself (no dlopen, no binutils): the libraries it needs and the
// functions it exports. For `graft check`'s ABI checks.
#ifndef GRAFT_TOOLS_CHECK_ELF_DYNAMIC_H_
#define GRAFT_TOOLS_CHECK_ELF_DYNAMIC_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace graft::check {

struct ElfDynamic {
  // DT_NEEDED entries, in order.
  std::vector<std::string> needed;
  // Defined global or weak symbols of the dynamic symbol table with default
  // or protected visibility: what dlsym finds.
  std::set<std::string> exported;
};

// Reads the ELF64 little-endian shared object at `path`. Errors name the
// file and what is wrong (not ELF, not 64-bit, truncated, no .dynsym).
absl::StatusOr<ElfDynamic> ReadElfDynamic(const std::string& path);

}  // namespace graft::check

#endif  // GRAFT_TOOLS_CHECK_ELF_DYNAMIC_H_
