// What the xnnpack compiler plugin and dispatch library agree on: the
// vendor's identity and the bytecode format they share
// (xnnpack_bytecode.fbs, BYTECODE.md). Internal to vendors/xnnpack.
#ifndef GRAFT_VENDORS_XNNPACK_XNNPACK_VENDOR_H_
#define GRAFT_VENDORS_XNNPACK_XNNPACK_VENDOR_H_

#include <cstdint>

#include "xnnpack_bytecode_generated.h"

namespace graft_xnnpack {

inline constexpr char kVendor[] = "xnnpack";
// Change whenever the plugin emits different bytecode for the same input.
inline constexpr char kPluginVersion[] = "1.0.0";
// Module.format_version and the stamp's bytecode_format_version.
inline constexpr uint32_t kBytecodeFormatVersion = 1;
// The one "SoC model": any CPU XNNPACK runs on.
inline constexpr char kSocModel[] = "xnnpack-cpu";
// XNNPACK's limits in the version this vendor builds with (xnnpack.h:
// XNN_MAX_TENSOR_DIMS); the plugin refuses what the library cannot define.
inline constexpr size_t kMaxRank = 6;
// The value id of an absent optional input (XNN_INVALID_VALUE_ID).
inline constexpr uint32_t kNoValue = UINT32_MAX;

// Bytes per element of a bytecode datatype.
inline size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::FP32:
    case DataType::QINT32:
    case DataType::QCINT32:
      return 4;
    case DataType::QINT8:
    case DataType::QCINT8:
      return 1;
  }
  return 0;
}

}  // namespace graft_xnnpack

#endif  // GRAFT_VENDORS_XNNPACK_XNNPACK_VENDOR_H_
