# Installs the build into a fresh prefix: the fixture every out-of-tree
# consumer test builds against. WORK_DIR (the consumers' build directories,
# which hold PREFIX) is emptied first, so every consumer configures and
# builds anew against this install.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... -DPREFIX=... -P install_prefix.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
  RESULT_VARIABLE result OUTPUT_QUIET)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed")
endif()
