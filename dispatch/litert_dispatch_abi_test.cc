// Freezes Graft's declarations of LiteRT's dispatch ABI at the layouts
// ai-edge-litert 2.3.0 uses (litert_dispatch_abi.h), and checks how
// LiteRtDispatchLibrary treats libraries that are not what they claim.
#include "dispatch/litert_dispatch_abi.h"

#include <cstddef>
#include <cstring>
#include <string>

#include "dispatch/litert_backend.h"
#include "dispatch/litert_dispatch_library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "litert_dispatch_test_config.h"

namespace graft {
namespace {

using namespace litert_abi;  // NOLINT
using ::testing::HasSubstr;

// --- frozen layouts (64-bit) ---
static_assert(sizeof(void*) == 8, "the frozen layouts are the 64-bit ones");
static_assert(sizeof(LiteRtAbiHeader) == 8, "");
static_assert(sizeof(LiteRtApiVersion) == 12, "");
// LiteRtDispatchGetApi's table: 56 bytes in 2.3.0 (what Intel's library
// writes: 0x38 bytes copied from .data.rel.ro).
static_assert(sizeof(LiteRtDispatchApi) == 56, "");
static_assert(offsetof(LiteRtDispatchApi, version) == 8, "");
static_assert(offsetof(LiteRtDispatchApi, interface) == 24, "");
static_assert(offsetof(LiteRtDispatchApi, async_interface) == 32, "");
static_assert(offsetof(LiteRtDispatchApi, graph_interface) == 40, "");
static_assert(offsetof(LiteRtDispatchApi, tensor_buffer_handlers_def) == 48,
              "");
// The interface: 26 slots.
static_assert(sizeof(LiteRtDispatchInterface) == 26 * 8, "");
static_assert(offsetof(LiteRtDispatchInterface, initialize) == 0 * 8, "");
static_assert(offsetof(LiteRtDispatchInterface, device_context_create) == 4 * 8,
              "");
static_assert(offsetof(LiteRtDispatchInterface, get_input_requirements) ==
                  6 * 8,
              "");
static_assert(offsetof(LiteRtDispatchInterface, register_tensor_buffer) ==
                  8 * 8,
              "");
static_assert(offsetof(LiteRtDispatchInterface, invocation_context_create) ==
                  10 * 8,
              "");
static_assert(offsetof(LiteRtDispatchInterface, attach_input) == 13 * 8, "");
static_assert(offsetof(LiteRtDispatchInterface, invoke) == 17 * 8, "");
static_assert(offsetof(LiteRtDispatchInterface, destroy_metrics) == 22 * 8, "");
static_assert(offsetof(LiteRtDispatchInterface, check_runtime_compatibility) ==
                  23 * 8,
              "");
static_assert(offsetof(LiteRtDispatchInterface,
                       invocation_context_set_options) == 24 * 8,
              "");
// 2.3.0's handler set (Intel's at .data 0x2db68: tags 255 at +56, one
// type, 100, at +72).
static_assert(sizeof(LiteRtCustomTensorBufferHandlersDef) == 136, "");
static_assert(offsetof(LiteRtCustomTensorBufferHandlersDef, create_func) == 8,
              "");
static_assert(offsetof(LiteRtCustomTensorBufferHandlersDef, device_tag) == 56,
              "");
static_assert(offsetof(LiteRtCustomTensorBufferHandlersDef,
                       supported_buffer_types) == 72,
              "");
// The runtime context 2.3.0 passes: version 1.2, 416 bytes, 51 functions.
static_assert(sizeof(LiteRtRuntimeContext) == 416, "");
static_assert(offsetof(LiteRtRuntimeContext,
                       create_tensor_buffer_requirements) == 8,
              "");
static_assert(offsetof(LiteRtRuntimeContext, get_opaque_options) == 80, "");
static_assert(offsetof(LiteRtRuntimeContext, get_environment_options) == 104,
              "");
static_assert(offsetof(LiteRtRuntimeContext,
                       create_tensor_buffer_from_host_memory) == 160,
              "");
static_assert(offsetof(LiteRtRuntimeContext, get_tensor_buffer_host_memory) ==
                  240,
              "");
static_assert(offsetof(LiteRtRuntimeContext, set_tensor_buffer_event) == 312,
              "");
static_assert(offsetof(LiteRtRuntimeContext, wait_event) == 384, "");
static_assert(offsetof(LiteRtRuntimeContext,
                       get_options_hardware_accelerators) == 400,
              "");
static_assert(offsetof(LiteRtRuntimeContext, append_metric) == 408, "");
// Tensor types (LiteRT >= 2.2.0's 68-byte layout).
static_assert(sizeof(LiteRtLayout) == 68, "");
static_assert(offsetof(LiteRtLayout, dimensions) == 4, "");
static_assert(offsetof(LiteRtLayout, strides) == 36, "");
static_assert(sizeof(LiteRtRankedTensorType) == 72, "");
static_assert(offsetof(LiteRtRankedTensorType, layout) == 4, "");
static_assert(sizeof(LiteRtMemBuffer) == 32, "");
static_assert(offsetof(LiteRtMemBuffer, base_addr) == 8, "");
static_assert(offsetof(LiteRtMemBuffer, offset) == 16, "");
static_assert(offsetof(LiteRtMemBuffer, size) == 24, "");
static_assert(sizeof(LiteRtTensorBufferHandle) == 8, "");

TEST(LiteRtDispatchAbi, LayoutBitsPackRankAndHasStridesInOneWord) {
  LiteRtLayout layout = {};
  layout.rank = 4;
  layout.has_strides = 1;
  uint32_t word = 0;
  std::memcpy(&word, &layout, sizeof(word));
  EXPECT_EQ(word, 4u | (1u << 7));
}

TEST(LiteRtDispatchLibrary, RefusesALibraryWithoutLiteRtDispatchGetApi) {
  auto lib = LiteRtDispatchLibrary::Load(GRAFT_TEST_NO_GETAPI_LIBRARY);
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(lib.status().message(),
              HasSubstr("exports no LiteRtDispatchGetApi"));
  EXPECT_THAT(lib.status().message(), HasSubstr(GRAFT_TEST_NO_GETAPI_LIBRARY));
}

TEST(LiteRtDispatchLibrary, RefusesAnotherApiVersionBeforeCallingAnything) {
  // The fake library's functions all abort: the version check must come
  // first.
  auto lib = LiteRtDispatchLibrary::Load(GRAFT_TEST_WRONG_VERSION_LIBRARY);
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(lib.status().message(), HasSubstr("API version 1.0.0"));
  EXPECT_THAT(lib.status().message(), HasSubstr("exactly 0.1.0"));
}

TEST(LiteRtDispatchLibrary, RefusesAMissingFile) {
  auto lib = LiteRtDispatchLibrary::Load("/nonexistent/libLiteRtDispatch_X.so");
  ASSERT_FALSE(lib.ok());
  EXPECT_THAT(lib.status().message(), HasSubstr("/nonexistent"));
}

TEST(LiteRtDispatchLibrary, RuntimeContextIsVersion12WithEverySlotSet) {
  const LiteRtRuntimeContext* ctx = LiteRtHostRuntimeContext();
  EXPECT_EQ(ctx->abi_header.struct_size, 416);
  EXPECT_EQ(ctx->abi_header.major_version, 1);
  EXPECT_EQ(ctx->abi_header.minor_version, 2);
  const auto* slots = reinterpret_cast<void* const*>(
      reinterpret_cast<const uint8_t*>(ctx) + sizeof(LiteRtAbiHeader));
  for (size_t i = 0; i < 51; ++i) EXPECT_NE(slots[i], nullptr) << "slot " << i;
}

TEST(LiteRtDispatchLibrary, RequirementsRoundTripThroughTheRuntimeContext) {
  const LiteRtRuntimeContext* ctx = LiteRtHostRuntimeContext();
  const LiteRtTensorBufferType types[] = {kLiteRtTensorBufferTypeHostMemory,
                                          kLiteRtTensorBufferTypeDmaBuf};
  LiteRtTensorBufferRequirements r = nullptr;
  ASSERT_EQ(
      ctx->create_tensor_buffer_requirements(2, types, 1000, 0, nullptr, &r),
      kLiteRtStatusOk);
  auto taken = TakeRequirements(r);
  ASSERT_TRUE(taken.ok()) << taken.status();
  EXPECT_EQ(taken->size, 1000u);
  EXPECT_EQ(taken->alignment, 64u);
  EXPECT_TRUE(taken->SupportsHostMemory());
  EXPECT_TRUE(taken->strides.empty());
  EXPECT_FALSE(TakeRequirements(nullptr).ok());
}

TEST(LiteRtDispatchLibrary, HostBuffersAnswerTheGetters) {
  const LiteRtRuntimeContext* ctx = LiteRtHostRuntimeContext();
  float data[6] = {};
  LiteRtRankedTensorType type = {};
  type.element_type = kLiteRtElementTypeFloat32;
  type.layout.rank = 2;
  type.layout.dimensions[0] = 2;
  type.layout.dimensions[1] = 3;
  LiteRtTensorBuffer b = NewHostTensorBuffer(type, data, sizeof(data));
  void* mem = nullptr;
  EXPECT_EQ(ctx->get_tensor_buffer_host_memory(b, &mem), kLiteRtStatusOk);
  EXPECT_EQ(mem, data);
  size_t size = 0;
  EXPECT_EQ(ctx->get_tensor_buffer_size(b, &size), kLiteRtStatusOk);
  EXPECT_EQ(size, sizeof(data));
  LiteRtRankedTensorType got = {};
  EXPECT_EQ(ctx->get_tensor_buffer_tensor_type(b, &got), kLiteRtStatusOk);
  EXPECT_EQ(got.layout.rank, 2u);
  EXPECT_EQ(got.layout.dimensions[1], 3);
  LiteRtTensorBufferType bt = kLiteRtTensorBufferTypeUnknown;
  EXPECT_EQ(ctx->get_tensor_buffer_type(b, &bt), kLiteRtStatusOk);
  EXPECT_EQ(bt, kLiteRtTensorBufferTypeHostMemory);
  // A slot Graft does not provide answers Unsupported instead of crashing.
  LiteRtEvent event = nullptr;
  EXPECT_EQ(ctx->get_tensor_buffer_event(b, &event),
            kLiteRtStatusErrorUnsupported);
  DeleteTensorBuffer(b);
}

TEST(LiteRtVendor, MatchesIgnoringCaseAndUnderscores) {
  EXPECT_TRUE(SameLiteRtVendor("IntelOpenVINO", "Intel_Openvino"));
  EXPECT_TRUE(SameLiteRtVendor("IntelOpenVINO", "IntelOpenvino"));
  EXPECT_FALSE(SameLiteRtVendor("IntelOpenVINO", "Qualcomm"));
  EXPECT_FALSE(SameLiteRtVendor("", ""));
}

TEST(LiteRtVendor, PrecisionWarningNamesTheCpuFlag) {
  EXPECT_THAT(LiteRtPrecisionWarning("Intel_Openvino", " fpu avx512_bf16 sse "),
              HasSubstr("avx512_bf16"));
  EXPECT_THAT(LiteRtPrecisionWarning("Intel_Openvino", " amx_bf16 "),
              HasSubstr("bf16"));
  EXPECT_EQ(LiteRtPrecisionWarning("Intel_Openvino", " fpu avx2 "), "");
  EXPECT_EQ(LiteRtPrecisionWarning("Qualcomm", " avx512_bf16 "), "");
}

}  // namespace
}  // namespace graft
