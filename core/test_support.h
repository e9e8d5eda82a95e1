// Helpers for tests (unit tests beside the code and the suites in tests/).
// Header-only; linked through the graft_test_support CMake target.
#ifndef GRAFT_CORE_TEST_SUPPORT_H_
#define GRAFT_CORE_TEST_SUPPORT_H_

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/test_config.h"
#include "gtest/gtest.h"

namespace graft::testing {

// The third-party model corpus: $GRAFT_THIRD_PARTY_MODELS, else the path
// configured at build time (../shared/third_party_models).
inline std::string ThirdPartyModelsDir() {
  if (const char* env = std::getenv("GRAFT_THIRD_PARTY_MODELS")) return env;
  return GRAFT_DEFAULT_THIRD_PARTY_MODELS;
}

// The repository root (for test_models/ and golden files).
inline std::string SourceDir() { return GRAFT_SOURCE_DIR; }

// The build directory (built tools and vendor libraries).
inline std::string BinaryDir() { return GRAFT_BINARY_DIR; }

// Where the build puts the example (teaching) vendor's two libraries: its
// own directory, outside the default vendor_libs/ (it is opt-in).
inline std::string ExampleVendorDir() {
  return BinaryDir() + "/vendors/example";
}

// A fresh directory under the test temp dir, removed at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) /
                        "graft_test_XXXXXX")
                           .string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const {
    return (std::filesystem::path(path_) / name).string();
  }

 private:
  std::string path_;
};

}  // namespace graft::testing

// Skips the current test, saying why, when the corpus directory is absent.
#define GRAFT_SKIP_IF_NO_CORPUS()                                         \
  do {                                                                    \
    if (!std::filesystem::is_directory(                                   \
            ::graft::testing::ThirdPartyModelsDir())) {                   \
      GTEST_SKIP() << "third-party corpus not found at "                  \
                   << ::graft::testing::ThirdPartyModelsDir()             \
                   << " (set GRAFT_THIRD_PARTY_MODELS to its directory)"; \
    }                                                                     \
  } while (0)

// Vendor libraries that dlopen their own dependencies with RTLD_DEEPBIND
// (OpenVINO's TBB binding under Intel's LiteRT libraries, MediaTek's SDK
// loader) cannot run in a process under AddressSanitizer, which aborts such
// a dlopen (google/sanitizers#611). Tests that run them skip in sanitizer
// builds, saying so; the normal build runs them.
#if defined(__SANITIZE_ADDRESS__)
#define GRAFT_SKIP_IF_SANITIZED(what)                                        \
  GTEST_SKIP() << what                                                      \
               << " dlopens with RTLD_DEEPBIND, which AddressSanitizer "    \
                  "refuses (google/sanitizers#611); the normal build runs " \
                  "this test"
#else
#define GRAFT_SKIP_IF_SANITIZED(what) \
  do {                                \
  } while (0)
#endif

#endif  // GRAFT_CORE_TEST_SUPPORT_H_
