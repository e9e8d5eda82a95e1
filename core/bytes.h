// Bytes: an immutable byte span that keeps its storage alive.
//
// Constant data in the IR is either a view into a memory-mapped model file
// (zero-copy; the view holds a reference to the mapping) or bytes the IR owns
// (data created by a transformation or a builder). Copying a Bytes copies a
// reference, never the data.
#ifndef GRAFT_CORE_BYTES_H_
#define GRAFT_CORE_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace graft {

class Bytes {
 public:
  Bytes() = default;

  // A view of `data`; `owner` keeps the memory behind it alive.
  static Bytes View(absl::Span<const uint8_t> data,
                    std::shared_ptr<const void> owner) {
    Bytes b;
    b.owner_ = std::move(owner);
    b.data_ = data.data();
    b.size_ = data.size();
    return b;
  }

  // Takes ownership of `data`.
  static Bytes Own(std::vector<uint8_t> data) {
    auto storage =
        std::make_shared<const std::vector<uint8_t>>(std::move(data));
    Bytes b;
    b.data_ = storage->data();
    b.size_ = storage->size();
    b.owner_ = std::move(storage);
    return b;
  }

  // Copies `data` into owned storage.
  static Bytes Copy(absl::Span<const uint8_t> data) {
    return Own(std::vector<uint8_t>(data.begin(), data.end()));
  }
  static Bytes Copy(absl::string_view data) {
    return Copy(absl::Span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(data.data()), data.size()));
  }

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  absl::Span<const uint8_t> span() const { return {data_, size_}; }
  absl::string_view view() const {
    return {reinterpret_cast<const char*>(data_), size_};
  }

  // True when both refer to the same storage region (same pointer and size).
  bool SameStorage(const Bytes& other) const {
    return data_ == other.data_ && size_ == other.size_;
  }

 private:
  std::shared_ptr<const void> owner_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

inline bool operator==(const Bytes& a, const Bytes& b) {
  return a.view() == b.view();
}
inline bool operator!=(const Bytes& a, const Bytes& b) { return !(a == b); }

}  // namespace graft

#endif  // GRAFT_CORE_BYTES_H_
