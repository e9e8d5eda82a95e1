// The host side of Graft's C ABI, shared by compiler plugins (plugins/) and
// dispatch libraries (dispatch/): loading a shared library, the host table
// handed to it, and the one adapter that turns a graft_status_t into an
// absl::Status. (core/ includes the c_api headers for their plain C types
// only.)
#ifndef GRAFT_CORE_VENDOR_LIBRARY_H_
#define GRAFT_CORE_VENDOR_LIBRARY_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graft_common.h"

namespace graft {

// A dlopen()ed shared library; dlclose()d at destruction, but never unmapped
// (RTLD_NODELETE): a vendor library may keep process-wide state made once
// (a statically linked C++ runtime's exception pool, XNNPACK's
// xnn_initialize) that unloading would leak on every load. Opening the same
// file again reuses the mapping.
class DynamicLibrary {
 public:
  // Opens `path` with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE. Errors name the path and carry
  // dlerror()'s text (missing file, not an ELF object, unresolved symbol).
  static absl::StatusOr<std::unique_ptr<DynamicLibrary>> Open(
      const std::string& path);
  ~DynamicLibrary();
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  // The exported symbol `name`, or null when absent.
  void* Symbol(const char* name) const;
  const std::string& path() const { return path_; }

 private:
  DynamicLibrary(std::string path, void* handle)
      : path_(std::move(path)), handle_(handle) {}
  std::string path_;
  void* handle_;
};

// The table Graft hands one vendor library: statuses, logging (tagged with
// `tag`, e.g. "example plugin"), memory. Stable in memory for its lifetime,
// which must cover every object created with it.
class HostApi {
 public:
  explicit HostApi(std::string tag);
  HostApi(const HostApi&) = delete;
  HostApi& operator=(const HostApi&) = delete;

  const graft_host_api_t* table() const { return &table_; }
  const std::string& tag() const { return tag_; }

 private:
  graft_host_api_t table_;
  std::string tag_;
};

// Takes ownership of `status` (null means OK), releases it, and returns the
// equivalent absl::Status with its message prefixed by `context` (e.g.
// "example plugin: partition of subgraph 0"). Codes outside the known range
// become UNKNOWN. The message is the vendor's, through VendorString. A
// status whose struct_size does not cover its members is not read (nor
// released: its release pointer is not covered either) and becomes UNKNOWN.
absl::Status TakeStatus(graft_status_t* status, absl::string_view context);

// The most bytes of one vendor string Graft keeps (and reads).
inline constexpr size_t kMaxVendorTextBytes = 4096;

// Vendor text as Graft shows it on a terminal or writes it to a file:
// control characters and DEL escaped (\n, \r, \t, \xNN), so a message
// stays one line and cannot drive the terminal; longer than
// kMaxVendorTextBytes, it is cut there (at a UTF-8 character boundary) and
// says so. Every string a vendor library hands Graft (status messages, log
// lines, info and stamp fields, partition reasons) passes through it.
std::string SanitizeVendorText(absl::string_view text);

// A NUL-terminated string from a vendor library: read up to
// kMaxVendorTextBytes + 1 bytes (never further, so an unterminated or huge
// string costs no more), then SanitizeVendorText. "" for null.
std::string VendorString(const char* s);

}  // namespace graft

#endif  // GRAFT_CORE_VENDOR_LIBRARY_H_
