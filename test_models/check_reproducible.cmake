# Regenerates the builder-made models and compares them with the committed
# files, byte for byte.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${GENERATOR} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generator failed: ${rc}")
endif()
foreach(name residual_mlp.tflite)
  file(SHA256 ${OUT}/${name} fresh)
  file(SHA256 ${COMMITTED}/${name} committed)
  if(NOT fresh STREQUAL committed)
    message(FATAL_ERROR "${name}: the committed file differs from what "
            "make_builder_models produces; regenerate it (test_models/README.md)")
  endif()
endforeach()
message(STATUS "builder models reproducible")
