# Builds a copy of the generator while CMake configures, so that
# convgen_add_library can ask it which files a spec produces: CMake must know
# a target's sources before the build starts. The build itself runs the
# `convgen` target, which tracks the generator's sources like any other.
#
# CONVGEN_HOST_EXECUTABLE (a path to an already built `convgen`, e.g. another
# build tree's convgen-host/convgen) skips that build: the tests of the CMake
# flow use it to configure a consumer quickly.
set(CONVGEN_HOST_EXECUTABLE "" CACHE FILEPATH "A prebuilt convgen for configure-time queries (empty: build one)")
mark_as_advanced(CONVGEN_HOST_EXECUTABLE)
if(CONVGEN_HOST_EXECUTABLE)
  if(NOT EXISTS "${CONVGEN_HOST_EXECUTABLE}")
    message(FATAL_ERROR "convgen: CONVGEN_HOST_EXECUTABLE=${CONVGEN_HOST_EXECUTABLE} does not exist")
  endif()
  message(STATUS "convgen: configure-time queries use ${CONVGEN_HOST_EXECUTABLE}")
  set(CONVGEN_QUERY_EXECUTABLE "${CONVGEN_HOST_EXECUTABLE}" CACHE INTERNAL "convgen used at configure time")
  return()
endif()

set(_convgen_host_dir "${CMAKE_CURRENT_BINARY_DIR}/convgen-host")
set(_convgen_host_sources "${CMAKE_CURRENT_LIST_DIR}/../generator")
file(GLOB_RECURSE _convgen_host_inputs CONFIGURE_DEPENDS
  "${_convgen_host_sources}/*.cpp" "${_convgen_host_sources}/*.hpp")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_convgen_host_inputs})

message(STATUS "convgen: building the generator for configure-time queries in ${_convgen_host_dir}")
# Unoptimized: it answers which files a spec produces, in well under a second
# even for a whole network's spec, and -O3 would more than double the time
# the configure spends building it.
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${_convgen_host_sources}" -B "${_convgen_host_dir}"
          -G "${CMAKE_GENERATOR}" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG"
          "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}" "-DCMAKE_PREFIX_PATH=${CMAKE_PREFIX_PATH}"
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "convgen: configuring the host generator failed:\n${_out}")
endif()
execute_process(
  COMMAND "${CMAKE_COMMAND}" --build "${_convgen_host_dir}" --target convgen
  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "convgen: building the host generator failed:\n${_out}")
endif()
set(CONVGEN_QUERY_EXECUTABLE "${_convgen_host_dir}/convgen" CACHE INTERNAL "convgen used at configure time")
