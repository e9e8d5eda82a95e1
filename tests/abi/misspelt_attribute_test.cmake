# misspelt_attribute.c compiles with GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION and
# fails to compile, naming the identifier, with a misspelling of it.
#   cmake -DCC=... -DSOURCE=misspelt_attribute.c -DINCLUDE=c_api -P this
foreach(case right wrong)
  if(case STREQUAL "right")
    set(name GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION)
  else()
    set(name GRAFT_ATTR_FUSED_ACTIVATON_FUNCTION)
  endif()
  execute_process(
    COMMAND "${CC}" -std=c99 -pedantic -Wall -Werror -fsyntax-only
            -I "${INCLUDE}" -DATTRIBUTE=${name} "${SOURCE}"
    RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(case STREQUAL "right" AND NOT result EQUAL 0)
    message(FATAL_ERROR "the right name does not compile:\n${out}")
  endif()
  if(case STREQUAL "wrong")
    if(result EQUAL 0)
      message(FATAL_ERROR "${name} compiled: a misspelt attribute name must not")
    endif()
    if(NOT out MATCHES "ACTIVATON")
      message(FATAL_ERROR "the error does not name the misspelling:\n${out}")
    endif()
  endif()
endforeach()
message(STATUS "misspelt attribute name refused at compile time")
