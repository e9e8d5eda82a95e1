// A C++ app outside Graft's tree, built against an installed Graft with
// pkg-config only (build_and_run.sh), through the header-only C++ wrapper
// graft_app.hpp. It compiles a model ahead of time with the installed
// vendors (graft::Apply, default plugin directory), loads the result with
// the installed dispatch libraries (default dispatch directory), requires
// the vendor to run its ops, and compares one output with an .npy
// reference.
//   cxx_app MODEL COMPILED_OUT SIGNATURE INPUT.npy EXPECTED.npy [VENDOR]
// Without VENDOR the model runs as it is, on Graft's CPU kernels.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "graft_app.hpp"

namespace {

// Prints a failed status; true on failure.
bool Failed(const graft::Status& st, const char* what) {
  if (st.ok()) return false;
  std::fprintf(stderr, "cxx_app: %s: %s\n", what, st.message().c_str());
  return true;
}

std::vector<float> ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)),
                    std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return {};
  const size_t header = 10 + (static_cast<unsigned char>(bytes[8]) |
                              static_cast<unsigned char>(bytes[9]) << 8);
  std::vector<float> out((bytes.size() - header) / sizeof(float));
  std::copy(bytes.begin() + header, bytes.end(),
            reinterpret_cast<char*>(out.data()));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6 && argc != 7) {
    std::fprintf(stderr,
                 "usage: cxx_app MODEL COMPILED_OUT SIGNATURE INPUT.npy "
                 "EXPECTED.npy [VENDOR]\n");
    return 2;
  }
  const std::string vendor = argc == 7 ? argv[6] : "";
  std::string to_run = argv[1];
  std::printf("installed vendors: %s\n", graft_default_vendor_dir());
  if (!vendor.empty()) {
    graft::ApplyOptions apply_options;
    apply_options.vendors = {vendor};
    graft::Expected<graft::ApplyReport> report =
        graft::Apply(argv[1], argv[2], apply_options);
    if (Failed(report.error(), "apply")) return 1;
    std::printf("apply: %s", (*report)->summary);
    if ((*report)->ops_taken == 0) {
      std::fprintf(stderr, "cxx_app: %s took no op\n", vendor.c_str());
      return 1;
    }
    to_run = argv[2];
  }

  graft::ModelOptions options;
  options.fallback_policy = GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS;
  graft::Expected<graft::Model> model = graft::Model::Load(to_run, options);
  if (Failed(model.error(), "load")) return 1;
  graft::Expected<graft::Signature> sig = model->signature(argv[3]);
  if (Failed(sig.error(), "signature")) return 1;
  // A wrong name is an error listing the names there are.
  if (!Failed(sig->input_index("no_such_input").error(), "expected error")) {
    std::fprintf(stderr, "cxx_app: an unknown input was accepted\n");
    return 1;
  }
  // Zero-copy both ways: the runtime reads and writes this app's vectors.
  std::vector<float> input = ReadNpy(argv[4]), want = ReadNpy(argv[5]);
  std::vector<float> got(want.size());
  if (Failed(sig->bind_input("x", input), "bind input") ||
      Failed(sig->bind_output("code", got), "bind output") ||
      Failed(sig->invoke(), "invoke")) {
    return 1;
  }
  graft::Expected<graft::Span<const float>> code = sig->output<float>("code");
  if (Failed(code.error(), "output")) return 1;
  if (code->data != got.data()) {
    std::fprintf(stderr, "cxx_app: the bound output was not used in place\n");
    return 1;
  }
  graft::Expected<const graft_model_report_t*> placed = model->report();
  if (Failed(placed.error(), "report")) return 1;
  std::printf("ops on cpu %lld, on a vendor %lld, fallback %lld\n",
              static_cast<long long>((*placed)->ops_cpu),
              static_cast<long long>((*placed)->ops_vendor),
              static_cast<long long>((*placed)->ops_fallback));
  if (!vendor.empty() && (*placed)->ops_vendor == 0) {
    std::fprintf(stderr, "cxx_app: nothing ran on %s\n", vendor.c_str());
    return 1;
  }
  int bad = want.empty() ? 1 : 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1e-3f + 1e-3f * std::fabs(want[i])) {
      std::fprintf(stderr, "cxx_app: output[%zu] = %g, reference %g\n", i,
                   got[i], want[i]);
      bad = 1;
    }
  }
  if (!bad) std::printf("%zu outputs match the reference\n", want.size());
  return bad;
}
