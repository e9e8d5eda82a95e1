// Freezes the layout of every released struct of the dispatch ABI
// (graft_dispatch.h, ABI 1.0, LP64) and the values of its enumerations.
// Part of abi_layout_test; see layout_test.cc for the rules: if an assert
// here fires, a released layout changed. Append members instead.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "graft_dispatch.h"

static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8,
              "the frozen layouts below are for LP64 targets");

#define GRAFT_FREEZE_SIZE(type, size) \
  static_assert(sizeof(type) == (size), "layout of " #type " changed")
#define GRAFT_FREEZE_OFFSET(type, member, offset)   \
  static_assert(offsetof(type, member) == (offset), \
                "offset of " #type "." #member " changed")

// Enumerations are fixed-width integers, whatever the compiler.
static_assert(sizeof(graft_dispatch_capabilities_t) == 4, "");
static_assert(sizeof(graft_dispatch_invocation_flags_t) == 4, "");
static_assert(sizeof(graft_dispatch_io_kind_t) == 4, "");

GRAFT_FREEZE_SIZE(graft_dispatch_info_t, 80);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, abi_version, 8);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, capabilities, 12);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, vendor, 16);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, library_version, 24);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, build_id, 32);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, description, 40);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, hardware_kinds, 48);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, min_bytecode_format_version, 52);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, max_bytecode_format_version, 56);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, reserved0, 60);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, options, 64);
GRAFT_FREEZE_OFFSET(graft_dispatch_info_t, num_options, 72);

GRAFT_FREEZE_SIZE(graft_dispatch_invocation_desc_t, 88);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, bytecode, 8);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, entry_point, 24);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, num_inputs, 32);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, num_outputs, 40);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, model, 48);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, model_fd, 64);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, flags, 68);
// Appended in ABI 1.1.
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, model_buffers, 72);
GRAFT_FREEZE_OFFSET(graft_dispatch_invocation_desc_t, num_model_buffers, 80);

GRAFT_FREEZE_SIZE(graft_dispatch_buffer_requirements_t, 32);
GRAFT_FREEZE_OFFSET(graft_dispatch_buffer_requirements_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_dispatch_buffer_requirements_t, size, 8);
GRAFT_FREEZE_OFFSET(graft_dispatch_buffer_requirements_t, alignment, 16);
GRAFT_FREEZE_OFFSET(graft_dispatch_buffer_requirements_t, element_type, 24);
GRAFT_FREEZE_OFFSET(graft_dispatch_buffer_requirements_t, reserved0, 28);

GRAFT_FREEZE_SIZE(graft_dispatch_profile_event_t, 32);
GRAFT_FREEZE_OFFSET(graft_dispatch_profile_event_t, name, 0);
GRAFT_FREEZE_OFFSET(graft_dispatch_profile_event_t, start_ns, 8);
GRAFT_FREEZE_OFFSET(graft_dispatch_profile_event_t, end_ns, 16);
GRAFT_FREEZE_OFFSET(graft_dispatch_profile_event_t, vendor_location, 24);

// Released enumerators never change value.
static_assert(GRAFT_DISPATCH_CAPABILITY_ASYNC == 1 &&
                  GRAFT_DISPATCH_CAPABILITY_PROFILING == 2,
              "");
static_assert(GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING == 1, "");
static_assert(GRAFT_DISPATCH_IO_KIND_INPUT == 0 &&
                  GRAFT_DISPATCH_IO_KIND_OUTPUT == 1,
              "");
static_assert(GRAFT_DISPATCH_TIMEOUT_INFINITE == UINT64_MAX, "");

namespace {

TEST(DispatchLayout, DescGrowsByAppendingOnly) {
  // A host compiled before `flags` existed passes a shorter desc; a library
  // must see that the member is absent.
  graft_dispatch_invocation_desc_t desc{};
  desc.struct_size = offsetof(graft_dispatch_invocation_desc_t, flags);
  EXPECT_TRUE(
      GRAFT_STRUCT_HAS_MEMBER(&desc, graft_dispatch_invocation_desc_t, model_fd));
  EXPECT_FALSE(
      GRAFT_STRUCT_HAS_MEMBER(&desc, graft_dispatch_invocation_desc_t, flags));
}

}  // namespace
