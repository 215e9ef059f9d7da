# convgen_add_library(<target> SPECS <spec.yaml>... [NAME <c_identifier>] [ARCHS <arch>...]
#                     [SKIP_INVALID])
#
# Generates specialized CUDA depthwise kernels from the specs at build time
# and returns <target>, an ordinary static library. Link it and include
# <name>.h; the library name comes from NAME, else from the specs' `library`
# key. SKIP_INVALID leaves invalid workloads out (reported when configuring)
# instead of failing. One translation unit per kernel, so kernels compile in parallel and an
# edited spec recompiles only the kernels whose text changed.
#
# Needs: CONVGEN_EXECUTABLE (the generator run at build time, a target name
# or a path), CONVGEN_QUERY_EXECUTABLE (a generator runnable at configure
# time), CONVGEN_TEMPLATE_DIR and the target convgen::runtime. The convgen
# project and its package config set them.

# The values set when this file is included are also kept globally, so that
# the function works from any directory: after add_subdirectory(convgen) the
# variables exist only in convgen's own directory scope. A variable set in
# the caller's scope still wins.
foreach(_convgen_var IN ITEMS CONVGEN_EXECUTABLE CONVGEN_QUERY_EXECUTABLE CONVGEN_TEMPLATE_DIR)
  if(DEFINED ${_convgen_var})
    set_property(GLOBAL PROPERTY ${_convgen_var} "${${_convgen_var}}")
  endif()
endforeach()

function(convgen_add_library target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "SKIP_INVALID" "NAME" "SPECS;ARCHS")
  foreach(var IN ITEMS CONVGEN_EXECUTABLE CONVGEN_QUERY_EXECUTABLE CONVGEN_TEMPLATE_DIR)
    if(NOT ${var})
      get_property(${var} GLOBAL PROPERTY ${var})
    endif()
    if(NOT ${var})
      message(FATAL_ERROR "convgen_add_library(${target}): ${var} is not set; use find_package(convgen) "
                          "or add_subdirectory(<convgen source>) first")
    endif()
  endforeach()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "convgen_add_library(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SPECS)
    message(FATAL_ERROR "convgen_add_library(${target}): SPECS is required")
  endif()

  set(specs "")
  foreach(spec IN LISTS ARG_SPECS)
    get_filename_component(spec "${spec}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND specs "${spec}")
  endforeach()
  set(name_args "")
  if(ARG_NAME)
    set(name_args --name "${ARG_NAME}")
  endif()
  if(ARG_SKIP_INVALID)
    list(APPEND name_args --skip-invalid)
  endif()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.convgen")

  # The file names depend on the specs: re-configure when one changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${specs})
  execute_process(
    COMMAND "${CONVGEN_QUERY_EXECUTABLE}" outputs ${specs} ${name_args} --templates "${CONVGEN_TEMPLATE_DIR}"
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE names ERROR_VARIABLE errors)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "convgen_add_library(${target}): the specs are invalid:\n${errors}")
  elseif(errors)
    message(STATUS "convgen_add_library(${target}):\n${errors}")
  endif()
  string(STRIP "${names}" names)
  string(REPLACE "\n" ";" names "${names}")
  set(outputs "")
  set(sources "")
  foreach(name IN LISTS names)
    list(APPEND outputs "${out_dir}/${name}")
    if(name MATCHES "\\.cu$")
      list(APPEND sources "${out_dir}/${name}")
    endif()
  endforeach()

  file(GLOB templates CONFIGURE_DEPENDS "${CONVGEN_TEMPLATE_DIR}/*.mustache")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${CONVGEN_EXECUTABLE}" generate ${specs} ${name_args} --templates "${CONVGEN_TEMPLATE_DIR}"
            --out "${out_dir}" --prune
    DEPENDS "${CONVGEN_EXECUTABLE}" ${specs} ${templates}
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    COMMENT "convgen: generating ${target}"
    VERBATIM)

  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${out_dir}>")
  target_link_libraries(${target} PUBLIC convgen::runtime)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_ARCHS)
    set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${ARG_ARCHS}")
  endif()
  # Kernels need only fast host code; -lineinfo keeps profiles readable.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
endfunction()
