/* A fake LiteRT compiler plugin, for tests/plugins: plain C99 against
 * Graft's declarations of LiteRT's ABI only (it links nothing of Graft), as
 * a vendor's libLiteRtCompilerPlugin_*.so is built against LiteRT's headers.
 *
 * SoC manufacturer "Fakeco", SoC models fake_soc_a and fake_soc_b, NPU and
 * CPU. Partition takes every ADD and MUL (push_op to partition 0), asking
 * only through the host's callback table. Compile writes one readable text
 * module per partition listing the ops it saw, with their fused
 * activations, and one call "partition_<n>" into it:
 *
 *   fakeco bytecode v1
 *   soc fake_soc_a
 *   options partition_strategy = 0; max_partitions = 0;
 *   partition_0 2 ops
 *     ADD RELU
 *     MUL NONE
 *
 * Built once per variant (tests/plugins/CMakeLists.txt), each misbehaving in
 * one way:
 *   FAKE_API_MAJOR/MINOR      reports another LiteRT API version
 *   FAKE_NO_COMPILE           does not export LiteRtCompilerPluginCompile
 *   FAKE_CREATE_FAILS         create answers kLiteRtStatusErrorRuntimeFailure
 *   FAKE_BAD_CALL_COUNT       compile reports one call more than partitions
 *   FAKE_BAD_MODULE_INDEX     the first call names module 7
 *   FAKE_PUSH_FOREIGN_OP      partition also pushes an op handle the host
 *                             did not hand out (the plugin's own object)
 *   FAKE_INCOMPATIBLE         CheckCompilerCompatibility refuses every SoC
 *   FAKE_NOISY_SOC            its first SoC model name holds a terminal
 *                             escape and a newline */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/litert_abi.h"
#include "plugins/litert_compiler_abi.h"

#define FAKE_EXPORT __attribute__((visibility("default")))

#ifndef FAKE_API_MAJOR
#define FAKE_API_MAJOR LITERT_HOST_API_VERSION_MAJOR
#endif
#ifndef FAKE_API_MINOR
#define FAKE_API_MINOR LITERT_HOST_API_VERSION_MINOR
#endif

/* .tflite BuiltinOperator values. */
enum { kFakeOpAdd = 0, kFakeOpMul = 18 };

struct LiteRtCompilerPluginT {
  const LiteRtCompilerContext* ctx;
  char options[256];
};

typedef struct {
  char* text;
  size_t size;
  size_t capacity;
} FakeBuffer;

struct LiteRtCompiledResultT {
  size_t num_modules;
  FakeBuffer* modules;
  char (*calls)[32];
};

#ifdef FAKE_NOISY_SOC
static const char* const kSocs[] = {"fake\x1b[31m_soc\n", "fake_soc_b"};
#else
static const char* const kSocs[] = {"fake_soc_a", "fake_soc_b"};
#endif

FAKE_EXPORT LiteRtStatus
LiteRtGetCompilerPluginVersion(LiteRtApiVersion* version) {
  if (version == NULL) return kLiteRtStatusErrorInvalidArgument;
  version->major = FAKE_API_MAJOR;
  version->minor = FAKE_API_MINOR;
  version->patch = 0;
  return kLiteRtStatusOk;
}

FAKE_EXPORT const char* LiteRtGetCompilerPluginSocManufacturer(void) {
  return "Fakeco";
}

FAKE_EXPORT LiteRtStatus LiteRtCreateCompilerPlugin(
    const LiteRtCompilerContext* ctx, LiteRtCompilerPlugin* plugin,
    LiteRtEnvironmentOptions env, LiteRtOptions options) {
  LiteRtCompilerPlugin p;
  LiteRtOpaqueOptions opaque = NULL;
  void* payload = NULL;
  size_t i;
  (void)env;
#ifdef FAKE_CREATE_FAILS
  (void)ctx;
  (void)plugin;
  (void)options;
  return kLiteRtStatusErrorRuntimeFailure;
#endif
  if (ctx == NULL || plugin == NULL) return kLiteRtStatusErrorInvalidArgument;
  /* Everything this plugin calls lies within the 1.0 table. */
  if (ctx->abi_header.struct_size <
      offsetof(LiteRtCompilerContext, get_custom_options)) {
    return kLiteRtStatusErrorWrongVersion;
  }
  p = calloc(1, sizeof(*p));
  if (p == NULL) return kLiteRtStatusErrorMemoryAllocationFailure;
  p->ctx = ctx;
  strcpy(p->options, "none");
  if (options != NULL &&
      ctx->get_opaque_options(options, &opaque) == kLiteRtStatusOk &&
      ctx->find_opaque_options_data(opaque, "compiler_options_string",
                                    &payload) == kLiteRtStatusOk &&
      payload != NULL) {
    strncpy(p->options, (const char*)payload, sizeof(p->options) - 1);
    for (i = 0; p->options[i] != '\0'; ++i) {
      if (p->options[i] == '\n') p->options[i] = ';';
    }
  }
  *plugin = p;
  return kLiteRtStatusOk;
}

FAKE_EXPORT void LiteRtDestroyCompilerPlugin(LiteRtCompilerPlugin plugin) {
  free(plugin);
}

FAKE_EXPORT LiteRtStatus LiteRtGetCompilerPluginSupportedHardware(
    LiteRtCompilerPlugin plugin, LiteRtHwAcceleratorSet* hardware) {
  if (plugin == NULL || hardware == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *hardware = LITERT_HW_ACCELERATOR_NPU | LITERT_HW_ACCELERATOR_CPU;
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtGetNumCompilerPluginSupportedSocModels(
    LiteRtCompilerPlugin plugin, LiteRtParamIndex* num) {
  if (plugin == NULL || num == NULL) return kLiteRtStatusErrorInvalidArgument;
  *num = sizeof(kSocs) / sizeof(kSocs[0]);
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtGetCompilerPluginSupportedSocModel(
    LiteRtCompilerPlugin plugin, LiteRtParamIndex index, const char** name) {
  if (plugin == NULL || name == NULL) return kLiteRtStatusErrorInvalidArgument;
  if (index >= sizeof(kSocs) / sizeof(kSocs[0])) {
    return kLiteRtStatusErrorIndexOOB;
  }
  *name = kSocs[index];
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtGetCompilerPluginSDKVersion(
    LiteRtCompilerPlugin plugin, const char** version) {
  if (plugin == NULL || version == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *version = "fakeco-sdk-1.2";
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtCompilerPluginPartition(
    LiteRtCompilerPlugin plugin, const char* soc_model, LiteRtSubgraph subgraph,
    LiteRtOpList selected_ops) {
  const LiteRtCompilerContext* c;
  LiteRtParamIndex num_ops = 0, i;
  LiteRtStatus s;
  if (plugin == NULL || soc_model == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  c = plugin->ctx;
  if ((s = c->get_num_subgraph_ops(subgraph, &num_ops)) != kLiteRtStatusOk) {
    return s;
  }
  for (i = 0; i < num_ops; ++i) {
    LiteRtOp op = NULL;
    LiteRtOpCode code = -1;
    if ((s = c->get_subgraph_op(subgraph, i, &op)) != kLiteRtStatusOk) return s;
    if ((s = c->get_op_code(op, &code)) != kLiteRtStatusOk) return s;
    if (code != kFakeOpAdd && code != kFakeOpMul) continue;
    if ((s = c->push_op(selected_ops, op, 0)) != kLiteRtStatusOk) return s;
  }
#ifdef FAKE_PUSH_FOREIGN_OP
  /* A plugin that ignores push_op's answer, as real ones do. */
  (void)c->push_op(selected_ops, (LiteRtOp)(void*)plugin, 0);
#endif
  return kLiteRtStatusOk;
}

static void FreeResult(LiteRtCompiledResult r) {
  size_t i;
  if (r == NULL) return;
  for (i = 0; i < r->num_modules; ++i) free(r->modules[i].text);
  free(r->modules);
  free(r->calls);
  free(r);
}

#ifndef FAKE_NO_COMPILE
/* printf into a growing buffer; 0 on allocation failure. */
static int Append(FakeBuffer* b, const char* fmt, const char* s, size_t n) {
  char line[256];
  int len = s != NULL ? snprintf(line, sizeof(line), fmt, s)
                      : snprintf(line, sizeof(line), fmt, (unsigned long)n);
  if (len < 0 || (size_t)len >= sizeof(line)) return 0;
  if (b->size + (size_t)len + 1 > b->capacity) {
    size_t cap = b->capacity * 2 + (size_t)len + 64;
    char* t = realloc(b->text, cap);
    if (t == NULL) return 0;
    b->text = t;
    b->capacity = cap;
  }
  memcpy(b->text + b->size, line, (size_t)len + 1);
  b->size += (size_t)len;
  return 1;
}

static const char* ActivationName(uint32_t a) {
  static const char* const kNames[] = {"NONE",  "RELU", "RELU_N1_TO_1",
                                       "RELU6", "TANH", "SIGN_BIT"};
  return a < sizeof(kNames) / sizeof(kNames[0]) ? kNames[a] : "?";
}

/* Writes the text module of partition `index` into `out`. */
static LiteRtStatus WriteModule(const LiteRtCompilerPlugin plugin,
                                const char* soc_model, LiteRtModel partitions,
                                size_t index, FakeBuffer* out) {
  const LiteRtCompilerContext* c = plugin->ctx;
  LiteRtSubgraph subgraph = NULL;
  LiteRtParamIndex num_ops = 0, i;
  LiteRtStatus s;
  char name[32];
  if ((s = c->get_model_subgraph(partitions, index, &subgraph)) !=
      kLiteRtStatusOk) {
    return s;
  }
  if ((s = c->get_num_subgraph_ops(subgraph, &num_ops)) != kLiteRtStatusOk) {
    return s;
  }
  snprintf(name, sizeof(name), "partition_%lu", (unsigned long)index);
  if (!Append(out, "fakeco bytecode v1\nsoc %s\n", soc_model, 0) ||
      !Append(out, "options %s\n", plugin->options, 0) ||
      !Append(out, "%s ", name, 0) ||
      !Append(out, "%lu ops\n", NULL, num_ops)) {
    return kLiteRtStatusErrorMemoryAllocationFailure;
  }
  for (i = 0; i < num_ops; ++i) {
    LiteRtOp op = NULL;
    LiteRtOpCode code = -1;
    uint32_t activation = 0;
    if ((s = c->get_subgraph_op(subgraph, i, &op)) != kLiteRtStatusOk) return s;
    if ((s = c->get_op_code(op, &code)) != kLiteRtStatusOk) return s;
    if (code == kFakeOpAdd) {
      s = c->get_add_fused_activation_option(op, &activation);
    } else if (code == kFakeOpMul) {
      s = c->get_mul_fused_activation_option(op, &activation);
    } else {
      return kLiteRtStatusErrorCompilation; /* Never partitioned. */
    }
    /* An op without options: no activation. */
    if (s != kLiteRtStatusOk) activation = 0;
    if (!Append(out, "  %s", code == kFakeOpAdd ? "ADD" : "MUL", 0) ||
        !Append(out, " %s\n", ActivationName(activation), 0)) {
      return kLiteRtStatusErrorMemoryAllocationFailure;
    }
  }
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtCompilerPluginCompile(
    LiteRtCompilerPlugin plugin, const char* soc_model, LiteRtModel partitions,
    LiteRtCompiledResult* result) {
  LiteRtParamIndex n = 0, i;
  LiteRtCompiledResult r;
  LiteRtStatus s;
  if (plugin == NULL || soc_model == NULL || result == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  if ((s = plugin->ctx->get_num_model_subgraphs(partitions, &n)) !=
      kLiteRtStatusOk) {
    return s;
  }
  r = calloc(1, sizeof(*r));
  if (r == NULL) return kLiteRtStatusErrorMemoryAllocationFailure;
  r->modules = calloc(n + 1, sizeof(*r->modules));
  r->calls = calloc(n + 1, sizeof(*r->calls));
  if (r->modules == NULL || r->calls == NULL) {
    FreeResult(r);
    return kLiteRtStatusErrorMemoryAllocationFailure;
  }
  for (i = 0; i < n; ++i) {
    ++r->num_modules;
    if ((s = WriteModule(plugin, soc_model, partitions, i, &r->modules[i])) !=
        kLiteRtStatusOk) {
      FreeResult(r);
      return s;
    }
    snprintf(r->calls[i], sizeof(r->calls[i]), "partition_%lu",
             (unsigned long)i);
  }
  *result = r;
  return kLiteRtStatusOk;
}
#endif

FAKE_EXPORT void LiteRtDestroyCompiledResult(LiteRtCompiledResult result) {
  FreeResult(result);
}

FAKE_EXPORT LiteRtStatus LiteRtGetCompiledResultByteCode(
    LiteRtCompiledResult result, LiteRtParamIndex index, const void** byte_code,
    size_t* byte_code_size) {
  if (result == NULL || byte_code == NULL || byte_code_size == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  if (index >= result->num_modules) return kLiteRtStatusErrorIndexOOB;
  *byte_code = result->modules[index].text;
  *byte_code_size = result->modules[index].size;
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtCompiledResultNumByteCodeModules(
    LiteRtCompiledResult result, LiteRtParamIndex* num) {
  if (result == NULL || num == NULL) return kLiteRtStatusErrorInvalidArgument;
  *num = result->num_modules;
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtGetCompiledResultCallInfo(
    LiteRtCompiledResult result, LiteRtParamIndex call_index,
    const void** call_info, size_t* call_info_size,
    LiteRtParamIndex* byte_code_index) {
  if (result == NULL || call_info == NULL || call_info_size == NULL ||
      byte_code_index == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  if (call_index >= result->num_modules) return kLiteRtStatusErrorIndexOOB;
  *call_info = result->calls[call_index];
  *call_info_size = strlen(result->calls[call_index]);
  *byte_code_index = call_index;
#ifdef FAKE_BAD_MODULE_INDEX
  if (call_index == 0) *byte_code_index = 7;
#endif
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtGetNumCompiledResultCalls(
    LiteRtCompiledResult result, LiteRtParamIndex* num_calls) {
  if (result == NULL || num_calls == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *num_calls = result->num_modules;
#ifdef FAKE_BAD_CALL_COUNT
  *num_calls += 1;
#endif
  return kLiteRtStatusOk;
}

FAKE_EXPORT LiteRtStatus LiteRtCompilerPluginCheckCompilerCompatibility(
    LiteRtApiVersion api_version, LiteRtCompilerPlugin plugin,
    LiteRtEnvironmentOptions env, LiteRtOptions options,
    const char* soc_model) {
  (void)env;
  (void)options;
  if (plugin == NULL || soc_model == NULL) {
    return kLiteRtStatusErrorInvalidArgument;
  }
#ifdef FAKE_INCOMPATIBLE
  (void)api_version;
  return kLiteRtStatusErrorUnsupportedCompilerVersion;
#else
  return api_version.major == LITERT_HOST_API_VERSION_MAJOR &&
                 api_version.minor == LITERT_HOST_API_VERSION_MINOR
             ? kLiteRtStatusOk
             : kLiteRtStatusErrorWrongVersion;
#endif
}
