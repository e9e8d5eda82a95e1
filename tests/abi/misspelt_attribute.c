/* Compiled twice by misspelt_attribute_test.cmake: with ATTRIBUTE defined
 * as a real generated name it must compile; misspelt, it must not. A
 * string literal in its place would compile either way and read the
 * default at run time, which is what the generated constants prevent. */
#include "graft_vendor_helper.h"

int64_t activation(const graft_op_t* op);

int64_t activation(const graft_op_t* op) {
  return graft_vendor_attribute_int(op, ATTRIBUTE,
                                    GRAFT_ACTIVATION_FUNCTION_TYPE_NONE);
}
