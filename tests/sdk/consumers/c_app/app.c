/* A C app on the installed libgraft: runs one signature of a model on an
 * .npy input and compares the output with an .npy reference.
 *   c_app MODEL SIGNATURE INPUT.npy EXPECTED.npy
 * Exit 0 when every element is within 1e-4 (relative 1e-4) of the
 * reference. float32 .npy files (version 1.0) only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graft_app.h"

/* Reads a float32 .npy file's data; NULL on error. */
static float* read_npy(const char* path, size_t* out_count) {
  FILE* f = fopen(path, "rb");
  unsigned char head[10];
  float* data = NULL;
  long size;
  size_t header_len;
  if (f == NULL) return NULL;
  if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0) {
    fclose(f);
    return NULL;
  }
  header_len = (size_t)head[8] | ((size_t)head[9] << 8);
  fseek(f, 0, SEEK_END);
  size = ftell(f) - (long)(10 + header_len);
  fseek(f, (long)(10 + header_len), SEEK_SET);
  data = (float*)malloc((size_t)size);
  if (data == NULL || fread(data, 1, (size_t)size, f) != (size_t)size) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *out_count = (size_t)size / sizeof(float);
  return data;
}

/* Prints and releases a failed status; returns 1 for a failure. */
static int failed(graft_status_t* status, const char* what) {
  if (status == NULL) return 0;
  fprintf(stderr, "c_app: %s: %s (code %d)\n", what, status->message,
          (int)status->code);
  graft_status_release(status);
  return 1;
}

int main(int argc, char** argv) {
  graft_model_options_t options;
  graft_model_t* model = NULL;
  graft_signature_t* sig = NULL;
  const graft_tensor_info_t* info = NULL;
  const graft_model_report_t* report = NULL;
  const void* out = NULL;
  size_t out_size = 0, in_count = 0, want_count = 0, i, index = 0;
  float *in, *want;
  int bad = 0;
  if (argc != 5) {
    fprintf(stderr, "usage: c_app MODEL SIGNATURE INPUT.npy EXPECTED.npy\n");
    return 2;
  }
  in = read_npy(argv[3], &in_count);
  want = read_npy(argv[4], &want_count);
  if (in == NULL || want == NULL) {
    fprintf(stderr, "c_app: cannot read %s or %s\n", argv[3], argv[4]);
    return 1;
  }
  printf("libgraft %s, app API %u.%u\n", graft_version(),
         (unsigned)GRAFT_ABI_VERSION_GET_MAJOR(graft_app_api_version()),
         (unsigned)GRAFT_ABI_VERSION_GET_MINOR(graft_app_api_version()));
  graft_model_options_init(&options);
  options.num_threads = 2;
  if (failed(graft_model_create_from_file(argv[1], &options, &model), "load") ||
      failed(graft_model_find_signature(model, argv[2], &sig), "signature") ||
      failed(graft_signature_get_input_info(sig, 0, &info), "input info")) {
    return 1;
  }
  printf("input '%s': %s, %zu dims, %zu bytes\n", info->name,
         graft_element_type_name(info->element_type), info->num_dims,
         info->byte_size);
  if (failed(graft_signature_set_input(sig, 0, in, in_count * sizeof(float)),
             "set input") ||
      failed(graft_signature_invoke(sig), "invoke") ||
      failed(graft_signature_get_output_buffer(sig, 0, &out, &out_size),
             "output") ||
      failed(graft_model_get_report(model, &report), "report")) {
    return 1;
  }
  {
    /* An unknown name is an error that lists the names there are. */
    graft_status_t* st = graft_signature_find_output(sig, "nope", &index);
    if (st == NULL || st->code != GRAFT_STATUS_NOT_FOUND) {
      fprintf(stderr, "c_app: an unknown output name was not refused\n");
      return 1;
    }
    printf("unknown output: %s\n", st->message);
    graft_status_release(st);
  }
  if (out_size != want_count * sizeof(float)) {
    fprintf(stderr, "c_app: output has %zu bytes, reference %zu\n", out_size,
            want_count * sizeof(float));
    return 1;
  }
  for (i = 0; i < want_count; ++i) {
    float got = ((const float*)out)[i];
    if (fabsf(got - want[i]) > 1e-4f + 1e-4f * fabsf(want[i])) {
      fprintf(stderr, "c_app: output[%zu] = %g, reference %g\n", i, got,
              want[i]);
      bad = 1;
    }
  }
  printf("%zu outputs match; ops on cpu %lld, on a vendor %lld\n", want_count,
         (long long)report->ops_cpu, (long long)report->ops_vendor);
  graft_model_destroy(model);
  free(in);
  free(want);
  return bad;
}
