/* Graft C ABI: a header-only helper for vendor libraries.
 *
 * The checks every compiler plugin and dispatch library makes at its
 * boundary, written once: the host table (present, this ABI major, large
 * enough), the struct_size of what the host passes, user options (unknown
 * keys, integers and booleans with ranges), and op attributes read by a
 * generated name (graft_schema_constants.h: GRAFT_OP_*, GRAFT_ATTR_*,
 * GRAFT_<ENUM>_*), so a misspelt op or attribute name fails to compile
 * instead of silently reading the default.
 *
 * Everything here is a static inline function or a macro: using it adds no
 * exported symbol and no dependency (libraries still export exactly the
 * entry points of their ABI and link no Graft library). Pure C99 (also C++),
 * includes only the other c_api headers, <stddef.h>, <stdint.h> and
 * <string.h>.
 *
 * Statuses returned here follow graft_common.h: NULL is OK; otherwise the
 * caller owns the status and normally returns it to the host. `vendor` is
 * the message prefix (your vendor name), borrowed for the call.
 *
 *   graft_status_t* s = graft_vendor_check_host(host);
 *   if (s != NULL) return s;
 *   s = graft_vendor_check_options(host, "acme", options, num_options,
 *                                  k_options, ACME_NUM_OPTIONS);
 *   if (s != NULL) return s;
 *   s = graft_vendor_option_int(host, "acme", options, num_options,
 *                               "threads", 1, 1, 64, &threads);
 *   ...
 *   act = graft_vendor_attribute_int(op, GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION,
 *                                    GRAFT_ACTIVATION_FUNCTION_TYPE_NONE);
 */
#ifndef GRAFT_C_API_GRAFT_VENDOR_HELPER_H_
#define GRAFT_C_API_GRAFT_VENDOR_HELPER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graft_common.h"
#include "graft_graph.h"
#include "graft_schema_constants.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* The host table                                                             */
/* ------------------------------------------------------------------------ */

/* Checks the host table a library receives at create: not NULL, of this
 * ABI's major version, and at least as large as the table these headers
 * describe. Returns NULL when it is usable; otherwise a static status
 * (release == NULL: no host table can be trusted to make one), NULL host
 * INVALID_ARGUMENT, another major or a short table FAILED_PRECONDITION. */
static inline graft_status_t* graft_vendor_check_host(
    const graft_host_api_t* host) {
  static graft_status_t null_host = GRAFT_STATUS_INITIALIZER(
      GRAFT_STATUS_INVALID_ARGUMENT, "vendor library: the host table is NULL");
  static graft_status_t other_major = GRAFT_STATUS_INITIALIZER(
      GRAFT_STATUS_FAILED_PRECONDITION,
      "vendor library: the host table is of another Graft ABI major version");
  static graft_status_t too_small = GRAFT_STATUS_INITIALIZER(
      GRAFT_STATUS_FAILED_PRECONDITION,
      "vendor library: the host table is smaller than graft_host_api_t "
      "(a host older than these headers)");
  if (host == NULL) return &null_host;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
      GRAFT_ABI_VERSION_MAJOR) {
    return &other_major;
  }
  if (host->struct_size < sizeof(graft_host_api_t) ||
      host->status_create == NULL || host->status_create_formatted == NULL) {
    return &too_small;
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Struct sizes                                                               */
/* ------------------------------------------------------------------------ */

/* The struct_size an extensible struct of `type` needs for the library to
 * read `member` and everything before it. */
#define GRAFT_VENDOR_SIZE_THROUGH(type, member) \
  (offsetof(type, member) + sizeof(((const type*)0)->member))

/* Checks that `ptr` (an extensible struct of `type` the host passed) is not
 * NULL and that its struct_size covers `member`, the last member the
 * library reads. Returns NULL or an INVALID_ARGUMENT status naming the type:
 *   s = GRAFT_VENDOR_CHECK_STRUCT(host, "acme", desc,
 *                                 graft_dispatch_invocation_desc_t, flags);
 */
#define GRAFT_VENDOR_CHECK_STRUCT(host, vendor, ptr, type, member) \
  graft_vendor_check_struct_size(                                  \
      (host), (vendor), #type, (ptr) != NULL,                      \
      (ptr) == NULL ? (size_t)0 : (ptr)->struct_size,              \
      GRAFT_VENDOR_SIZE_THROUGH(type, member))

/* The function behind GRAFT_VENDOR_CHECK_STRUCT. */
static inline graft_status_t* graft_vendor_check_struct_size(
    const graft_host_api_t* host, const char* vendor, const char* type_name,
    int present, size_t struct_size, size_t needed) {
  if (!present) {
    return host->status_create_formatted(host, GRAFT_STATUS_INVALID_ARGUMENT,
                                         "%s: %s is NULL", vendor, type_name);
  }
  if (struct_size < needed) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "%s: %s has struct_size %zu; this library reads %zu bytes of it",
        vendor, type_name, struct_size, needed);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                    */
/* ------------------------------------------------------------------------ */

/* The value of option `key`, or NULL when it is not given (the last one
 * wins when a key repeats; graft_vendor_check_options refuses repeats). */
static inline const char* graft_vendor_option_find(
    const graft_key_value_t* options, size_t num_options, const char* key) {
  const char* value = NULL;
  size_t i;
  if (options == NULL || key == NULL) return NULL;
  for (i = 0; i < num_options; ++i) {
    if (options[i].key != NULL && strcmp(options[i].key, key) == 0) {
      value = options[i].value;
    }
  }
  return value;
}

/* Checks options against the ones a library accepts (`known`, the list its
 * info publishes): NULL array with a count, a NULL key or value, an unknown
 * key (the message lists the known ones) or a key given twice are
 * INVALID_ARGUMENT. */
static inline graft_status_t* graft_vendor_check_options(
    const graft_host_api_t* host, const char* vendor,
    const graft_key_value_t* options, size_t num_options,
    const graft_option_info_t* known, size_t num_known) {
  size_t i, j;
  if (options == NULL && num_options > 0) {
    return host->status_create_formatted(host, GRAFT_STATUS_INVALID_ARGUMENT,
                                         "%s: %zu options but no array", vendor,
                                         num_options);
  }
  for (i = 0; i < num_options; ++i) {
    int is_known = 0;
    if (options[i].key == NULL || options[i].value == NULL) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "%s: option %zu has a NULL key or value", vendor, i);
    }
    for (j = 0; j < num_known; ++j) {
      if (strcmp(options[i].key, known[j].name) == 0) is_known = 1;
    }
    if (!is_known) {
      char list[256];
      size_t used = 0;
      list[0] = '\0';
      for (j = 0; j < num_known; ++j) {
        size_t length = strlen(known[j].name);
        if (used + length + 3 >= sizeof(list)) break;
        if (used > 0) {
          memcpy(list + used, ", ", 2);
          used += 2;
        }
        memcpy(list + used, known[j].name, length);
        used += length;
        list[used] = '\0';
      }
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "%s: unknown option '%s' (known: %s)", vendor, options[i].key,
          num_known == 0 ? "none" : list);
    }
    for (j = 0; j < i; ++j) {
      if (strcmp(options[i].key, options[j].key) == 0) {
        return host->status_create_formatted(
            host, GRAFT_STATUS_INVALID_ARGUMENT,
            "%s: option '%s' is given twice", vendor, options[i].key);
      }
    }
  }
  return NULL;
}

/* Parses a decimal integer (an optional '-', then digits, nothing else).
 * Returns 1 and sets *out_value when `text` is one within [min, max];
 * 0 otherwise, leaving *out_value untouched. */
static inline int graft_vendor_parse_int(const char* text, int64_t min,
                                         int64_t max, int64_t* out_value) {
  uint64_t magnitude = 0;
  uint64_t limit;
  int negative = 0;
  if (text == NULL || *text == '\0') return 0;
  if (*text == '-') {
    negative = 1;
    ++text;
    if (*text == '\0') return 0;
  }
  /* |INT64_MIN| = INT64_MAX + 1. */
  limit = negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
  for (; *text != '\0'; ++text) {
    uint64_t digit;
    if (*text < '0' || *text > '9') return 0;
    digit = (uint64_t)(*text - '0');
    if (magnitude > (limit - digit) / 10u) return 0;
    magnitude = magnitude * 10u + digit;
  }
  {
    int64_t value;
    if (negative) {
      value = magnitude == (uint64_t)INT64_MAX + 1u ? INT64_MIN
                                                    : -(int64_t)magnitude;
    } else {
      value = (int64_t)magnitude;
    }
    if (value < min || value > max) return 0;
    *out_value = value;
  }
  return 1;
}

/* Reads integer option `key`: `default_value` when absent, else the value
 * if it parses within [min, max], else INVALID_ARGUMENT naming key, value
 * and range. *out_value is set only on success. */
static inline graft_status_t* graft_vendor_option_int(
    const graft_host_api_t* host, const char* vendor,
    const graft_key_value_t* options, size_t num_options, const char* key,
    int64_t default_value, int64_t min, int64_t max, int64_t* out_value) {
  const char* text = graft_vendor_option_find(options, num_options, key);
  if (text == NULL) {
    *out_value = default_value;
    return NULL;
  }
  if (!graft_vendor_parse_int(text, min, max, out_value)) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "%s: option %s must be an integer in [%lld, %lld], got '%s'", vendor,
        key, (long long)min, (long long)max, text);
  }
  return NULL;
}

/* Reads boolean option `key` ("0" or "1"): `default_value` when absent,
 * INVALID_ARGUMENT for any other text. */
static inline graft_status_t* graft_vendor_option_bool(
    const graft_host_api_t* host, const char* vendor,
    const graft_key_value_t* options, size_t num_options, const char* key,
    int default_value, int* out_value) {
  const char* text = graft_vendor_option_find(options, num_options, key);
  if (text == NULL) {
    *out_value = default_value;
    return NULL;
  }
  if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "%s: option %s must be 0 or 1, got '%s'", vendor, key, text);
  }
  *out_value = text[0] == '1';
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Op attributes                                                              */
/* ------------------------------------------------------------------------ */

/* int_value of attribute `name` of `op` (INT, BOOL or ENUM), or
 * `default_value` when the op has no such attribute or it holds another
 * type. Pass a GRAFT_ATTR_* constant as `name`. */
static inline int64_t graft_vendor_attribute_int(const graft_op_t* op,
                                                 const char* name,
                                                 int64_t default_value) {
  const graft_attribute_t* a = graft_op_find_attribute(op, name);
  if (a == NULL || (a->type != GRAFT_ATTRIBUTE_TYPE_INT &&
                    a->type != GRAFT_ATTRIBUTE_TYPE_BOOL &&
                    a->type != GRAFT_ATTRIBUTE_TYPE_ENUM)) {
    return default_value;
  }
  return a->int_value;
}

/* float_value of FLOAT attribute `name` of `op`, or `default_value`. */
static inline double graft_vendor_attribute_float(const graft_op_t* op,
                                                  const char* name,
                                                  double default_value) {
  const graft_attribute_t* a = graft_op_find_attribute(op, name);
  if (a == NULL || a->type != GRAFT_ATTRIBUTE_TYPE_FLOAT) return default_value;
  return a->float_value;
}

/* ------------------------------------------------------------------------ */
/* Tensors                                                                    */
/* ------------------------------------------------------------------------ */

/* 1 when `a` and `b` have the same static shape (rank and dims). */
static inline int graft_vendor_same_shape(const graft_tensor_t* a,
                                          const graft_tensor_t* b) {
  size_t i;
  if (a == NULL || b == NULL || a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; ++i) {
    if (a->dims[i] != b->dims[i]) return 0;
  }
  return 1;
}

/* 1 when `t` holds constant data (GRAFT_TENSOR_FLAG_CONSTANT). */
static inline int graft_vendor_tensor_is_constant(const graft_tensor_t* t) {
  return t != NULL && (t->flags & GRAFT_TENSOR_FLAG_CONSTANT) != 0;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAFT_C_API_GRAFT_VENDOR_HELPER_H_ */
