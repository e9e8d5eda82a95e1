// Checks what each built vendor library (compiler plugin or dispatch
// library) exports and links:
//   - its dynamic symbol table defines EXACTLY the functions declared in
//     graft_compiler_plugin.h or graft_dispatch.h (nothing leaks out,
//     nothing is missing);
//   - it references no graft_* symbol it expects the host to provide;
//   - it has no NEEDED entry other than system runtime libraries, in
//     particular none on a Graft library.
// Uses the binutils a vendor would use (nm -D, readelf -d). The library
// paths come from CMake ($<TARGET_FILE:...>); environment variables
// GRAFT_EXAMPLE_COMPILER_PLUGIN / GRAFT_NULL_COMPILER_PLUGIN /
// GRAFT_EXAMPLE_DISPATCH / GRAFT_NULL_DISPATCH override them, so the same
// test can vet a vendor's own .so.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "graft_compiler_plugin.h"
#include "graft_dispatch.h"

namespace {

// Runs `command` and returns its stdout; fails the test on a non-zero exit.
std::string Run(const std::string& command) {
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "cannot run: " << command;
    return output;
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    output.append(buffer, n);
  }
  int rc = pclose(pipe);
  EXPECT_EQ(rc, 0) << "command failed: " << command;
  return output;
}

std::string LibraryPath(const char* env_var, const char* default_path) {
  const char* path = std::getenv(env_var);
  return path != nullptr && *path != '\0' ? path : default_path;
}

// Names of the dynamic symbols `nm -D <flag>` lists.
std::set<std::string> DynamicSymbols(const std::string& library,
                                     const std::string& flag) {
  std::set<std::string> names;
  std::istringstream lines(Run("nm -D " + flag + " '" + library + "'"));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> parts;
    std::string part;
    while (fields >> part) parts.push_back(part);
    // "<address> <type> <name>" or, for undefined ones, "<type> <name>".
    if (parts.size() >= 2) names.insert(parts.back());
  }
  return names;
}

std::vector<std::string> NeededLibraries(const std::string& library) {
  std::vector<std::string> needed;
  std::istringstream lines(Run("readelf -d '" + library + "'"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("(NEEDED)") == std::string::npos) continue;
    size_t open = line.find('['), close = line.find(']');
    if (open != std::string::npos && close != std::string::npos) {
      needed.push_back(line.substr(open + 1, close - open - 1));
    }
  }
  return needed;
}

// The two kinds of vendor library and the functions each exports.
enum class Kind { kCompilerPlugin, kDispatch };

// Every function graft_compiler_plugin.h / graft_dispatch.h declares.
const std::set<std::string>& DeclaredEntryPoints(Kind kind) {
  static const std::set<std::string>* kPlugin = new std::set<std::string>{
      GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL,
      GRAFT_COMPILER_PLUGIN_CREATE_SYMBOL,
      GRAFT_COMPILER_PLUGIN_DESTROY_SYMBOL,
      GRAFT_COMPILER_PLUGIN_GET_INFO_SYMBOL,
      GRAFT_COMPILER_PLUGIN_CHECK_COMPATIBILITY_SYMBOL,
      GRAFT_COMPILER_PLUGIN_PARTITION_SYMBOL,
      GRAFT_COMPILER_PLUGIN_COMPILE_SYMBOL,
      GRAFT_COMPILER_PLUGIN_COMPILED_RESULT_DESTROY_SYMBOL,
  };
  static const std::set<std::string>* kDispatchLibrary =
      new std::set<std::string>{
          GRAFT_DISPATCH_ABI_VERSION_SYMBOL,
          GRAFT_DISPATCH_CREATE_SYMBOL,
          GRAFT_DISPATCH_DESTROY_SYMBOL,
          GRAFT_DISPATCH_GET_INFO_SYMBOL,
          GRAFT_DISPATCH_CHECK_COMPATIBILITY_SYMBOL,
          GRAFT_DISPATCH_DEVICE_CONTEXT_CREATE_SYMBOL,
          GRAFT_DISPATCH_DEVICE_CONTEXT_DESTROY_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_CREATE_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_DESTROY_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_GET_BUFFER_REQUIREMENTS_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_ATTACH_HOST_MEMORY_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_INVOKE_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL,
          GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL,
      };
  return kind == Kind::kCompilerPlugin ? *kPlugin : *kDispatchLibrary;
}

bool IsOptional(const std::string& name) {
  return name == GRAFT_COMPILER_PLUGIN_CHECK_COMPATIBILITY_SYMBOL ||
         name == GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL ||
         name == GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL ||
         name == GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL;
}

// System runtime libraries a vendor library may need. The sanitizer
// runtimes appear in GRAFT_SANITIZE builds.
bool IsSystemLibrary(const std::string& soname) {
  static const char* const kPrefixes[] = {
      "libc.so.",     "libm.so.",    "libdl.so.",    "libpthread.so.",
      "librt.so.",    "ld-linux",    "libgcc_s.so.", "libstdc++.so.",
      "libasan.so.",
      "libubsan.so.", "libtsan.so.", "liblsan.so.",
  };
  for (const char* prefix : kPrefixes) {
    if (soname.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

struct VendorLibrary {
  const char* name;
  Kind kind;
  const char* env_var;
  const char* default_path;
  // Graft's own vendors implement the optional entry points too.
  bool exports_optional;
  // Sonames (prefixes) of the vendor's own runtime libraries it may need
  // besides system ones, e.g. its accelerator's user-space driver.
  std::vector<std::string> vendor_runtime = {};
};

// Names the parameter in test listings instead of dumping its bytes.
void PrintTo(const VendorLibrary& library, std::ostream* os) {
  *os << library.name;
}

class VendorLibraryTest : public ::testing::TestWithParam<VendorLibrary> {
 protected:
  std::string path() const {
    return LibraryPath(GetParam().env_var, GetParam().default_path);
  }
};

TEST_P(VendorLibraryTest, ExportsExactlyTheDeclaredEntryPoints) {
  const std::set<std::string> exported =
      DynamicSymbols(path(), "--defined-only");
  for (const std::string& name : exported) {
    EXPECT_EQ(DeclaredEntryPoints(GetParam().kind).count(name), 1u)
        << path() << " exports undeclared symbol " << name
        << "; build with -fvisibility=hidden and mark only the entry points "
           "GRAFT_EXPORT";
  }
  for (const std::string& name : DeclaredEntryPoints(GetParam().kind)) {
    if (IsOptional(name) && !GetParam().exports_optional) continue;
    EXPECT_EQ(exported.count(name), 1u)
        << path() << " does not export " << name;
  }
}

TEST_P(VendorLibraryTest, ExpectsNoSymbolFromTheHost) {
  for (const std::string& name : DynamicSymbols(path(), "--undefined-only")) {
    EXPECT_NE(name.rfind("graft", 0), 0u)
        << path() << " needs host symbol " << name
        << "; host services come through graft_host_api_t only";
  }
}

TEST_P(VendorLibraryTest, NeedsOnlySystemLibraries) {
  std::vector<std::string> needed = NeededLibraries(path());
  EXPECT_FALSE(needed.empty()) << "readelf found no NEEDED entry in " << path();
  for (const std::string& soname : needed) {
    EXPECT_EQ(soname.find("graft"), std::string::npos)
        << path() << " links a Graft library: " << soname;
    const auto& own = GetParam().vendor_runtime;
    const bool vendors_own =
        std::any_of(own.begin(), own.end(), [&](const std::string& prefix) {
          return soname.rfind(prefix, 0) == 0;
        });
    EXPECT_TRUE(IsSystemLibrary(soname) || vendors_own)
        << path() << " needs " << soname
        << "; vendor libraries may need system runtime libraries and their "
           "own vendor runtime only";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Vendors, VendorLibraryTest,
    ::testing::Values(
        VendorLibrary{"example", Kind::kCompilerPlugin,
                      "GRAFT_EXAMPLE_COMPILER_PLUGIN",
                      GRAFT_EXAMPLE_COMPILER_PLUGIN_PATH, true},
        VendorLibrary{"null", Kind::kCompilerPlugin,
                      "GRAFT_NULL_COMPILER_PLUGIN",
                      GRAFT_NULL_COMPILER_PLUGIN_PATH, true},
        VendorLibrary{"example_dispatch", Kind::kDispatch,
                      "GRAFT_EXAMPLE_DISPATCH", GRAFT_EXAMPLE_DISPATCH_PATH,
                      true},
        VendorLibrary{"null_dispatch", Kind::kDispatch, "GRAFT_NULL_DISPATCH",
                      GRAFT_NULL_DISPATCH_PATH, true}
#ifdef GRAFT_HAVE_XNNPACK
        ,
        VendorLibrary{"xnnpack", Kind::kCompilerPlugin,
                      "GRAFT_XNNPACK_COMPILER_PLUGIN",
                      GRAFT_XNNPACK_COMPILER_PLUGIN_PATH, true},
        VendorLibrary{"xnnpack_dispatch", Kind::kDispatch,
                      "GRAFT_XNNPACK_DISPATCH", GRAFT_XNNPACK_DISPATCH_PATH,
                      true, {"libXNNPACK.so.", "libpthreadpool.so.", "libcpuinfo.so."}}
#endif
        ),
    [](const ::testing::TestParamInfo<VendorLibrary>& info) {
      return std::string(info.param.name);
    });

}  // namespace
