/* A stand-in LiteRT dispatch library for litert_dispatch_abi_test.cc's
 * refusal tests. Built twice (dispatch/vendor_dispatch.cmake):
 *   FAKE_NO_GETAPI: exports no LiteRtDispatchGetApi at all;
 *   otherwise: LiteRtDispatchGetApi reports API version 1.0.0 (Graft hosts
 *   exactly 0.1.0) with an interface whose every function aborts, so the
 *   test fails loudly if the host calls anything after reading the version.
 * Plain C on purpose: declares only the two structs it fills, by size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_NO_GETAPI
static int Abort(void) {
  abort();
  return 0;
}

static void* interface_slots[26];

struct FakeApi {
  uint16_t abi_header[4];
  int version[3];
  void* interface;
  void* async_interface;
  void* graph_interface;
  void* tensor_buffer_handlers_def;
};

__attribute__((visibility("default"))) int LiteRtDispatchGetApi(
    struct FakeApi* api) {
  for (int i = 0; i < 26; ++i) interface_slots[i] = (void*)Abort;
  memset(api, 0, sizeof(*api));
  api->version[0] = 1;
  api->version[1] = 0;
  api->version[2] = 0;
  api->interface = interface_slots;
  return 0;
}
#else
__attribute__((visibility("default"))) int NotLiteRtDispatchGetApi(void) {
  return 0;
}
#endif
