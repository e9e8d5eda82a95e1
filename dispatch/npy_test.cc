#include "dispatch/npy.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/test_support.h"
#include "dispatch/string_tensor.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(NpyTest, RoundTripsEveryDtype) {
  for (tfl::TensorType t :
       {tfl::TensorType_FLOAT32, tfl::TensorType_INT64, tfl::TensorType_INT32,
        tfl::TensorType_INT8, tfl::TensorType_UINT8, tfl::TensorType_BOOL,
        tfl::TensorType_INT16, tfl::TensorType_FLOAT16}) {
    const size_t elem = TensorTypeBits(t) / 8;
    std::vector<uint8_t> data(6 * elem);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
    if (t == tfl::TensorType_BOOL) data.assign(6, 1);
    auto bytes = SerializeNpy(t, {2, 3}, data);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    EXPECT_EQ((bytes->size() - data.size()) % 64, 0u);
    auto a = ParseNpy(*bytes);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->type, t);
    EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(a->data, data);
  }
}

TEST(NpyTest, ScalarsAndOneDimensionalShapes) {
  float v = 1.5f;
  auto scalar = SerializeNpy(tfl::TensorType_FLOAT32, {},
                             {reinterpret_cast<uint8_t*>(&v), 4});
  ASSERT_TRUE(scalar.ok());
  EXPECT_NE(scalar->find("'shape': ()"), std::string::npos);
  auto a = ParseNpy(*scalar);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->shape.empty());
  auto vec = SerializeNpy(tfl::TensorType_FLOAT32, {1},
                          {reinterpret_cast<uint8_t*>(&v), 4});
  EXPECT_NE(vec->find("'shape': (1,)"), std::string::npos);
}

// A version 1.0 file as numpy 1.x writes it: the header dict padded with
// spaces to 128 bytes in all, then `body`.
std::string NumpyWritten(absl::string_view descr, absl::string_view body) {
  std::string header = absl::StrCat("{'descr': '", descr,
                                    "', 'fortran_order': False, 'shape': (3,), }");
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string file("\x93NUMPY\x01\x00", 8);
  file.push_back(static_cast<char>(header.size()));
  file.push_back(0);
  return absl::StrCat(file, header, body);
}

TEST(NpyTest, ParsesNumpyWrittenHeader) {
  // np.arange(3, dtype='<i4').
  const int32_t values[] = {0, 1, 2};
  auto a = ParseNpy(NumpyWritten(
      "<i4", absl::string_view(reinterpret_cast<const char*>(values),
                               sizeof(values))));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->type, tfl::TensorType_INT32);
  EXPECT_EQ(a->num_elements(), 3);
}

TEST(NpyTest, ByteStringsBecomeStringBuffers) {
  // np.array([b'ab', b'', b'xyz'], dtype='S').
  auto a = ParseNpy(NumpyWritten("|S3", absl::string_view("ab\0\0\0\0xyz", 9)));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->type, tfl::TensorType_STRING);
  const std::vector<std::string> want = {"ab", "", "xyz"};
  EXPECT_EQ(a->data, PackStrings(absl::MakeConstSpan(want)));
  // Back to numpy's layout, as wide as the longest string.
  auto bytes = SerializeNpy(a->type, a->shape, a->data);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_NE(bytes->find("'descr': '|S3'"), std::string::npos);
  EXPECT_EQ(bytes->substr(bytes->size() - 9), std::string("ab\0\0\0\0xyz", 9));
  auto again = ParseNpy(*bytes);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->data, a->data);
  // A malformed STRING buffer is refused, not written.
  EXPECT_FALSE(SerializeNpy(tfl::TensorType_STRING, {1}, {1, 0, 0}).ok());
}

TEST(NpyTest, RejectsMalformedFiles) {
  EXPECT_FALSE(ParseNpy("not npy").ok());
  auto good = SerializeNpy(tfl::TensorType_INT32, {2},
                           std::vector<uint8_t>(8, 0));
  ASSERT_TRUE(good.ok());
  EXPECT_FALSE(ParseNpy(good->substr(0, good->size() - 1)).ok());
  std::string fortran = *good;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_FALSE(ParseNpy(fortran).ok());
  std::string big_endian = *good;
  big_endian.replace(big_endian.find("<i4"), 3, ">i4");
  EXPECT_FALSE(ParseNpy(big_endian).ok());
}

TEST(NpyTest, WritesAndReadsFiles) {
  testing::TempDir tmp;
  const std::string path = tmp.Join("a.npy");
  const float values[] = {1, 2, 3, 4};
  ASSERT_TRUE(WriteNpy(path, tfl::TensorType_FLOAT32, {2, 2},
                       {reinterpret_cast<const uint8_t*>(values), 16})
                  .ok());
  auto a = ReadNpy(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(std::memcmp(a->data.data(), values, 16), 0);
  EXPECT_FALSE(ReadNpy(tmp.Join("missing.npy")).ok());
}

}  // namespace
}  // namespace graft
