/* A process that starts and exits, built twice by bench/CMakeLists.txt:
 * plain (graft_bench_app_start_baseline) and linked with libgraft.so,
 * calling graft_version() (graft_bench_app_start_libgraft). app_api_bench
 * times both: the difference is what libgraft.so costs a process at
 * start-up. */
#ifdef GRAFT_APP_START_LIBGRAFT
#include "c_api/graft_app.h"
#endif

int main(void) {
#ifdef GRAFT_APP_START_LIBGRAFT
  /* Touch the library so the call is bound and the library initialised. */
  if (graft_version()[0] == '\0') return 1;
#endif
  return 0;
}
