// CompareToReference (tolerance.h).
#include "dispatch/tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/model.h"
#include "dispatch/npy.h"
#include "dispatch/tensor.h"

namespace graft {

std::string CompareToReference(const Tensor& got, const NpyArray& want,
                               int64_t reduction_length, int integer_lsb) {
  if (got.type != want.type) {
    return absl::StrCat("dtype ", TensorTypeName(got.type), " vs reference ",
                        TensorTypeName(want.type));
  }
  std::vector<int64_t> got_shape(got.shape.begin(), got.shape.end());
  if (got_shape != want.shape) {
    return absl::StrCat("shape ", ShapeToString(got.shape), " vs reference [",
                        absl::StrJoin(want.shape, ", "), "]");
  }
  if (got.bytes != want.data.size()) return "size differs";
  if (got.type == tfl::TensorType_FLOAT32) {
    const float* g = got.data<float>();
    const float* w = reinterpret_cast<const float*>(want.data.data());
    const int64_t n = want.num_elements();
    double max_abs = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isfinite(w[i])) max_abs = std::max(max_abs, double(std::fabs(w[i])));
    }
    const FloatTolerance tol = Float32Tolerance(reduction_length, max_abs);
    int bad = 0;
    std::string first;
    for (int64_t i = 0; i < n; ++i) {
      if (!tol.Accepts(g[i], w[i])) {
        if (bad++ == 0) {
          first = absl::StrFormat("element %d: %.9g vs reference %.9g", i,
                                  g[i], w[i]);
        }
      }
    }
    if (bad > 0) {
      return absl::StrFormat("%d of %d elements off (atol %.3g, rtol %.3g); "
                             "first %s",
                             bad, n, tol.atol, tol.rtol, first);
    }
    return "";
  }
  if (got.type == tfl::TensorType_BOOL) {
    for (size_t i = 0; i < got.bytes; ++i) {
      if ((got.raw_data[i] != 0) != (want.data[i] != 0)) {
        return absl::StrFormat("bool element %d differs", i);
      }
    }
    return "";
  }
  if (std::memcmp(got.raw_data, want.data.data(), got.bytes) == 0) return "";
  // Say how far off, for the integer types a kernel computes.
  auto describe = [&](auto zero) -> std::string {
    using T = decltype(zero);
    const T* g = reinterpret_cast<const T*>(got.raw_data);
    const T* w = reinterpret_cast<const T*>(want.data.data());
    const int64_t n = static_cast<int64_t>(got.bytes / sizeof(T));
    int64_t bad = 0, first = -1;
    long double max_diff = 0;
    for (int64_t i = 0; i < n; ++i) {
      const long double diff = std::fabs(static_cast<long double>(g[i]) -
                                         static_cast<long double>(w[i]));
      if (diff <= integer_lsb) continue;
      if (bad++ == 0) first = i;
      max_diff = std::max(max_diff, diff);
    }
    if (bad == 0) return std::string();
    return absl::StrFormat(
        "%d of %d integer elements differ (by up to %.0Lf); first element "
        "%d: %d vs reference %d",
        bad, n, max_diff, first, static_cast<int64_t>(g[first]),
        static_cast<int64_t>(w[first]));
  };
  switch (got.type) {
    case tfl::TensorType_INT8: return describe(int8_t{});
    case tfl::TensorType_UINT8: return describe(uint8_t{});
    case tfl::TensorType_INT16: return describe(int16_t{});
    case tfl::TensorType_INT32: return describe(int32_t{});
    case tfl::TensorType_INT64: return describe(int64_t{});
    case tfl::TensorType_STRING: return "strings differ";
    default: return "integer outputs differ";
  }
}

}  // namespace graft
