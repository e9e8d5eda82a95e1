/* c_api/graft_app.h on its own, compiled as strict C99 with every warning
 * an error: it is self-contained and plain C. Runs the inline helpers. */
#include "graft_app.h"

int main(void) {
  graft_model_options_t model_options;
  graft_apply_options_t apply_options;
  graft_model_options_init(&model_options);
  graft_apply_options_init(&apply_options);
  if (model_options.struct_size != sizeof(model_options)) return 1;
  if (model_options.num_threads != 0 || model_options.dispatch_dirs != NULL)
    return 1;
  if (apply_options.struct_size != sizeof(apply_options)) return 1;
  if (apply_options.mode != GRAFT_APPLY_MODE_APPLY) return 1;
  return GRAFT_ABI_VERSION_GET_MAJOR(GRAFT_APP_API_VERSION) ==
                 GRAFT_APP_API_VERSION_MAJOR
             ? 0
             : 1;
}
