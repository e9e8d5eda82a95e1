// Freezes the layouts of the app API's structs (c_api/graft_app.h, app API
// 0.1, x86_64 LP64) and its enumeration values, as tests/abi/layout_test.cc
// does for the vendor ABI. If an assert fires, a released layout changed:
// apps built against the old header would read garbage. Append members
// instead (and assert them here); never edit a number below.
#include <cstddef>

#include "graft_app.h"

static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8 &&
                  alignof(double) == 8 && alignof(int64_t) == 8,
              "the frozen layouts below are for LP64 targets");

#define GRAFT_FREEZE_SIZE(type, size) \
  static_assert(sizeof(type) == (size), "layout of " #type " changed")
#define GRAFT_FREEZE_OFFSET(type, member, offset)   \
  static_assert(offsetof(type, member) == (offset), \
                "offset of " #type "." #member " changed")

static_assert(sizeof(graft_fallback_policy_t) == 4, "");
static_assert(sizeof(graft_model_flags_t) == 4, "");
static_assert(sizeof(graft_apply_mode_t) == 4, "");
static_assert(GRAFT_FALLBACK_POLICY_ALLOW_CPU == 0, "");
static_assert(GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS == 1, "");
static_assert(GRAFT_FALLBACK_POLICY_REQUIRE_ACCELERATOR == 2, "");
static_assert(GRAFT_MODEL_FLAG_PROFILING == 1, "");
static_assert(GRAFT_MODEL_FLAG_NO_DEFAULT_DISPATCH_DIR == 2, "");
static_assert(GRAFT_APPLY_MODE_APPLY == 0, "");
static_assert(GRAFT_APPLY_MODE_PARTITION == 1, "");
static_assert(GRAFT_APP_API_VERSION == 0x00000001u, "");

GRAFT_FREEZE_SIZE(graft_model_options_t, 112);
GRAFT_FREEZE_OFFSET(graft_model_options_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_model_options_t, num_threads, 8);
GRAFT_FREEZE_OFFSET(graft_model_options_t, fallback_policy, 12);
GRAFT_FREEZE_OFFSET(graft_model_options_t, flags, 16);
GRAFT_FREEZE_OFFSET(graft_model_options_t, reserved0, 20);
GRAFT_FREEZE_OFFSET(graft_model_options_t, dispatch_dirs, 24);
GRAFT_FREEZE_OFFSET(graft_model_options_t, num_dispatch_dirs, 32);
GRAFT_FREEZE_OFFSET(graft_model_options_t, dispatch_paths, 40);
GRAFT_FREEZE_OFFSET(graft_model_options_t, num_dispatch_paths, 48);
GRAFT_FREEZE_OFFSET(graft_model_options_t, plugin_dir, 56);
GRAFT_FREEZE_OFFSET(graft_model_options_t, cache_dir, 64);
GRAFT_FREEZE_OFFSET(graft_model_options_t, soc_model, 72);
GRAFT_FREEZE_OFFSET(graft_model_options_t, plugin_options, 80);
GRAFT_FREEZE_OFFSET(graft_model_options_t, num_plugin_options, 88);
GRAFT_FREEZE_OFFSET(graft_model_options_t, vendors, 96);
GRAFT_FREEZE_OFFSET(graft_model_options_t, num_vendors, 104);

GRAFT_FREEZE_SIZE(graft_tensor_info_t, 64);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, name, 8);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, element_type, 16);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, reserved0, 20);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, dims, 24);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, num_dims, 32);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, dims_signature, 40);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, byte_size, 48);
GRAFT_FREEZE_OFFSET(graft_tensor_info_t, quantization, 56);

GRAFT_FREEZE_SIZE(graft_model_report_t, 80);
GRAFT_FREEZE_OFFSET(graft_model_report_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_model_report_t, ops_cpu, 8);
GRAFT_FREEZE_OFFSET(graft_model_report_t, ops_folded, 16);
GRAFT_FREEZE_OFFSET(graft_model_report_t, ops_vendor, 24);
GRAFT_FREEZE_OFFSET(graft_model_report_t, ops_fallback, 32);
GRAFT_FREEZE_OFFSET(graft_model_report_t, ops_call, 40);
GRAFT_FREEZE_OFFSET(graft_model_report_t, compiled_on_device, 48);
GRAFT_FREEZE_OFFSET(graft_model_report_t, compile_cache_hit, 52);
GRAFT_FREEZE_OFFSET(graft_model_report_t, warnings, 56);
GRAFT_FREEZE_OFFSET(graft_model_report_t, num_warnings, 64);
GRAFT_FREEZE_OFFSET(graft_model_report_t, json, 72);

GRAFT_FREEZE_SIZE(graft_profile_t, 40);
GRAFT_FREEZE_OFFSET(graft_profile_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_profile_t, runs, 8);
GRAFT_FREEZE_OFFSET(graft_profile_t, total_ns, 16);
GRAFT_FREEZE_OFFSET(graft_profile_t, json, 24);
GRAFT_FREEZE_OFFSET(graft_profile_t, text, 32);

GRAFT_FREEZE_SIZE(graft_apply_options_t, 80);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, mode, 8);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, reserved0, 12);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, plugin_paths, 16);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, num_plugin_paths, 24);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, plugin_dir, 32);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, vendors, 40);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, num_vendors, 48);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, plugin_options, 56);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, num_plugin_options, 64);
GRAFT_FREEZE_OFFSET(graft_apply_options_t, soc_model, 72);

// A record that travels in arrays: frozen for good.
GRAFT_FREEZE_SIZE(graft_apply_op_t, 40);
GRAFT_FREEZE_OFFSET(graft_apply_op_t, subgraph, 0);
GRAFT_FREEZE_OFFSET(graft_apply_op_t, op, 4);
GRAFT_FREEZE_OFFSET(graft_apply_op_t, name, 8);
GRAFT_FREEZE_OFFSET(graft_apply_op_t, taken_by, 16);
GRAFT_FREEZE_OFFSET(graft_apply_op_t, partition, 24);
GRAFT_FREEZE_OFFSET(graft_apply_op_t, reserved0, 28);
GRAFT_FREEZE_OFFSET(graft_apply_op_t, refusals, 32);

GRAFT_FREEZE_SIZE(graft_apply_report_t, 104);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, ops_total, 8);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, ops_taken, 16);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, num_partitions, 24);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, num_modules, 32);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, bytecode_bytes, 40);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, seconds, 48);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, ops, 56);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, num_ops, 64);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, skipped_plugins, 72);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, num_skipped_plugins, 80);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, summary, 88);
GRAFT_FREEZE_OFFSET(graft_apply_report_t, json, 96);

// The layouts are checked at compile time; running says so.
int main() { return 0; }
