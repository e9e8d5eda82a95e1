#include "core/vendor_library.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"

namespace graft {

absl::StatusOr<std::unique_ptr<DynamicLibrary>> DynamicLibrary::Open(
    const std::string& path) {
  dlerror();
  // Through a symlink, open the file it names: a vendor library finds the
  // libraries it ships beside it through $ORIGIN in its RUNPATH, which the
  // loader takes from the path it was given.
  std::string target = path;
  if (path.find('/') != std::string::npos) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      target = real;
      ::free(real);
    }
  }
  void* handle =
      ::dlopen(target.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    // The loader's message quotes what the library asked for (a missing
    // dependency's or symbol's name, straight from its ELF tables) and the
    // file's name: vendor text like any other.
    const char* err = dlerror();
    return absl::NotFoundError(
        absl::StrCat(SanitizeVendorText(path), ": cannot load shared library: ",
                     SanitizeVendorText(err ? err : "unknown error")));
  }
  return std::unique_ptr<DynamicLibrary>(new DynamicLibrary(path, handle));
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

void* DynamicLibrary::Symbol(const char* name) const {
  return ::dlsym(handle_, name);
}

namespace {

// A status created by the host: one allocation holding the struct and the
// message.
struct HostStatus {
  graft_status_t base;
  char message[1];
};

void ReleaseHostStatus(graft_status_t* status) { std::free(status); }

graft_status_t kOutOfMemoryStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_RESOURCE_EXHAUSTED, "graft host: out of memory creating a status");

graft_status_t* MakeStatus(graft_status_code_t code, const char* message,
                           size_t length) {
  if (code == GRAFT_STATUS_OK) return nullptr;
  auto* s = static_cast<HostStatus*>(
      std::malloc(offsetof(HostStatus, message) + length + 1));
  if (s == nullptr) return &kOutOfMemoryStatus;
  std::memcpy(s->message, message, length);
  s->message[length] = '\0';
  s->base.struct_size = sizeof(graft_status_t);
  s->base.code = code;
  s->base.message = s->message;
  s->base.release = &ReleaseHostStatus;
  return &s->base;
}

graft_status_t* StatusCreate(const graft_host_api_t*, graft_status_code_t code,
                             const char* message) {
  if (message == nullptr) message = "";
  return MakeStatus(code, message, std::strlen(message));
}

graft_status_t* StatusCreateFormatted(const graft_host_api_t*,
                                      graft_status_code_t code,
                                      const char* format, ...) {
  if (format == nullptr) format = "";
  va_list args, copy;
  va_start(args, format);
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (n < 0) {
    va_end(args);
    return MakeStatus(code, format, std::strlen(format));
  }
  std::string text(static_cast<size_t>(n), '\0');
  std::vsnprintf(text.data(), text.size() + 1, format, args);
  va_end(args);
  return MakeStatus(code, text.data(), text.size());
}

int MinLogLevel() {
  static const int level = [] {
    const char* env = std::getenv("GRAFT_LOG_LEVEL");
    return env ? std::atoi(env) : GRAFT_LOG_LEVEL_WARNING;
  }();
  return level;
}

void LogMessage(const graft_host_api_t* host, graft_log_level_t level,
                const char* message) {
  if (message == nullptr || level < MinLogLevel()) return;
  static const char* kNames[] = {"verbose", "info", "warning", "error"};
  const char* name = level >= 0 && level <= 3 ? kNames[level] : "log";
  const auto* self = host != nullptr
                         ? static_cast<const HostApi*>(host->host_context)
                         : nullptr;
  std::fprintf(stderr, "[%s] %s: %s\n", name,
               self ? self->tag().c_str() : "vendor",
               VendorString(message).c_str());
}

void* Allocate(const graft_host_api_t*, size_t size, size_t alignment) {
  if (size == 0) return nullptr;
  if (alignment < alignof(std::max_align_t)) alignment = alignof(std::max_align_t);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  void* p = nullptr;
  return ::posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}

void Deallocate(const graft_host_api_t*, void* ptr) { std::free(ptr); }

}  // namespace

HostApi::HostApi(std::string tag) : tag_(std::move(tag)) {
  std::memset(&table_, 0, sizeof(table_));
  table_.struct_size = sizeof(graft_host_api_t);
  table_.abi_version = GRAFT_ABI_VERSION;
  table_.host_context = this;
  table_.status_create = &StatusCreate;
  table_.status_create_formatted = &StatusCreateFormatted;
  table_.log_message = &LogMessage;
  table_.allocate = &Allocate;
  table_.deallocate = &Deallocate;
}

absl::Status TakeStatus(graft_status_t* status, absl::string_view context) {
  if (status == nullptr) return absl::OkStatus();
  if (!GRAFT_STRUCT_HAS_MEMBER(status, graft_status_t, release)) {
    // Leaked rather than released through a pointer it does not have.
    return absl::UnknownError(absl::StrCat(
        context, ": the library returned a malformed status (struct_size ",
        status->struct_size, ", at least ", sizeof(graft_status_t),
        " expected)"));
  }
  graft_status_code_t code = status->code;
  std::string message = status->message != nullptr
                            ? VendorString(status->message)
                            : "(no message)";
  graft_status_release(status);
  if (code <= GRAFT_STATUS_OK || code > GRAFT_STATUS_UNAUTHENTICATED) {
    if (code == GRAFT_STATUS_OK) {
      message += " (the library returned a status with code OK)";
    }
    code = GRAFT_STATUS_UNKNOWN;
  }
  return absl::Status(static_cast<absl::StatusCode>(code),
                      absl::StrCat(context, ": ", message));
}

std::string SanitizeVendorText(absl::string_view text) {
  size_t keep = text.size();
  if (keep > kMaxVendorTextBytes) {
    keep = kMaxVendorTextBytes;
    // Not inside a UTF-8 sequence: back up over continuation bytes.
    while (keep > 0 && (static_cast<uint8_t>(text[keep]) & 0xC0) == 0x80) {
      --keep;
    }
  }
  std::string out;
  out.reserve(keep + 16);
  for (size_t i = 0; i < keep; ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (keep < text.size()) {
    absl::StrAppend(&out, "... (cut at ", kMaxVendorTextBytes, " bytes)");
  }
  return out;
}

std::string VendorString(const char* s) {
  if (s == nullptr) return "";
  return SanitizeVendorText(
      absl::string_view(s, ::strnlen(s, kMaxVendorTextBytes + 1)));
}

}  // namespace graft
