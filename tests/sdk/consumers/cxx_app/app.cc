// A C++ app outside Graft's tree, built against an installed Graft with
// pkg-config only (build.sh). It compiles a model ahead of time with the
// installed vendors (graft_apply, default plugin directory), loads the
// result with the installed dispatch libraries (default dispatch
// directory), requires the vendor to run its ops, and compares one output
// with an .npy reference.
//   cxx_app MODEL COMPILED_OUT SIGNATURE INPUT.npy EXPECTED.npy [VENDOR]
// Without VENDOR the model runs as it is, on Graft's CPU kernels.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "graft_app.h"

namespace {

struct Model {
  void operator()(graft_model_t* m) const { graft_model_destroy(m); }
};
struct Report {
  void operator()(graft_apply_report_t* r) const {
    graft_apply_report_destroy(r);
  }
};

// Throws nothing: prints and releases a failed status, true on failure.
bool Failed(graft_status_t* st, const char* what) {
  if (st == nullptr) return false;
  std::fprintf(stderr, "cxx_app: %s: %s\n", what, st->message);
  graft_status_release(st);
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
    graft_apply_options_t ao;
    graft_apply_options_init(&ao);
    const char* vendors[] = {vendor.c_str()};
    ao.vendors = vendors;
    ao.num_vendors = 1;
    graft_apply_report_t* raw = nullptr;
    if (Failed(graft_apply(argv[1], argv[2], &ao, &raw), "apply")) return 1;
    std::unique_ptr<graft_apply_report_t, Report> report(raw);
    std::printf("apply: %s", report->summary);
    if (report->ops_taken == 0) {
      std::fprintf(stderr, "cxx_app: %s took no op\n", vendor.c_str());
      return 1;
    }
    to_run = argv[2];
  }

  graft_model_options_t mo;
  graft_model_options_init(&mo);
  mo.fallback_policy = GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS;
  graft_model_t* raw_model = nullptr;
  if (Failed(graft_model_create_from_file(to_run.c_str(), &mo, &raw_model),
             "load")) {
    return 1;
  }
  std::unique_ptr<graft_model_t, Model> model(raw_model);
  graft_signature_t* sig = nullptr;
  size_t in = 0, out = 0;
  if (Failed(graft_model_find_signature(model.get(), argv[3], &sig),
             "signature") ||
      Failed(graft_signature_find_input(sig, "x", &in), "input") ||
      Failed(graft_signature_find_output(sig, "code", &out), "output")) {
    return 1;
  }
  // Zero-copy both ways: the runtime reads and writes this app's vectors.
  std::vector<float> input = ReadNpy(argv[4]), want = ReadNpy(argv[5]);
  std::vector<float> got(want.size());
  if (Failed(graft_signature_bind_input(sig, in, input.data(),
                                        input.size() * sizeof(float)),
             "bind input") ||
      Failed(graft_signature_bind_output(sig, out, got.data(),
                                         got.size() * sizeof(float)),
             "bind output") ||
      Failed(graft_signature_invoke(sig), "invoke")) {
    return 1;
  }
  const graft_model_report_t* placed = nullptr;
  if (Failed(graft_model_get_report(model.get(), &placed), "report")) return 1;
  std::printf("ops on cpu %lld, on a vendor %lld, fallback %lld\n",
              static_cast<long long>(placed->ops_cpu),
              static_cast<long long>(placed->ops_vendor),
              static_cast<long long>(placed->ops_fallback));
  if (!vendor.empty() && placed->ops_vendor == 0) {
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
