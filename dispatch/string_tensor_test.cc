#include "dispatch/string_tensor.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace graft {
namespace {

std::vector<uint8_t> Ints(const std::vector<int32_t>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST(StringTensorTest, PacksInTfliteLayout) {
  const std::vector<std::string> strings = {"ab", "", "xyz"};
  const std::vector<uint8_t> packed = PackStrings(absl::MakeConstSpan(strings));
  // count 3, offsets 20, 22, 22, 25, then "abxyz".
  std::vector<uint8_t> want = Ints({3, 20, 22, 22, 25});
  for (char c : std::string("abxyz")) want.push_back(static_cast<uint8_t>(c));
  EXPECT_EQ(packed, want);
  EXPECT_EQ(PackedStringsBytes({"ab", "", "xyz"}), want.size());
  auto back = UnpackStrings(packed);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(std::vector<std::string>(back->begin(), back->end()), strings);
  // No strings: the count and one offset.
  auto none = UnpackStrings(PackStrings(absl::Span<const std::string>()));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(StringTensorTest, RefusesMalformedBuffers) {
  EXPECT_FALSE(UnpackStrings({}).ok());                           // no count
  EXPECT_FALSE(UnpackStrings(Ints({-1})).ok());                   // negative
  EXPECT_FALSE(UnpackStrings(Ints({5, 28})).ok());                // too many
  EXPECT_FALSE(UnpackStrings(Ints({2, 16, 12, 16})).ok());        // descends
  std::vector<uint8_t> short_end = Ints({1, 12, 14});
  short_end.push_back('a');                                       // 13 bytes
  EXPECT_FALSE(UnpackStrings(short_end).ok());                    // past end
  std::vector<uint8_t> slack = Ints({1, 12, 13});
  slack.push_back('a');
  slack.push_back('b');                                           // 14 bytes
  EXPECT_FALSE(UnpackStrings(slack).ok());                        // not at end
}

}  // namespace
}  // namespace graft
