# convgen_add_library(<target> SPECS <spec.yaml>... [NAME <c_identifier>] [ARCHS <arch>...]
#                     [SKIP_INVALID] [TUNING <db.yaml> [TUNING_GPU <gpu name>] [ALLOW_UNTUNED]])
#
# Generates specialized CUDA depthwise kernels from the specs at build time
# and returns <target>, an ordinary static library. Link it and include
# <name>.h; the library name comes from NAME, else from the specs' `library`
# key. SKIP_INVALID leaves invalid workloads out (reported when configuring)
# instead of failing. One translation unit per kernel, so kernels compile in parallel and an
# edited spec recompiles only the kernels whose text changed.
#
# TUNING applies a tuning database (`convgen tune` writes one): a kernel takes
# the schedule set in its spec if any, else the database's entry for it on
# the target GPU, else the default rule. The target GPU is TUNING_GPU, as the
# database names it (e.g. "NVIDIA H100 80GB HBM3"); without it, the
# database's only GPU (a database of several GPUs then needs TUNING_GPU).
# A TUNING_GPU that the database holds no entry for stops the configure with
# the GPUs it does hold; ALLOW_UNTUNED accepts it instead (a note), and
# every kernel gets the default rule's schedule: for a build that targets a
# GPU nobody has tuned on yet.
# Applying needs no GPU: the build machine only reads the file. An entry
# tuned against another generator or template (stale fingerprint) is
# reported when configuring and not applied. Editing the database re-runs
# the generator, which rewrites only the kernels whose schedule changed, so
# only those recompile (and the registry, which lists the schedules).
# Relative paths (specs, TUNING) are relative to the calling CMakeLists.txt.
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
  cmake_parse_arguments(PARSE_ARGV 1 ARG "SKIP_INVALID;ALLOW_UNTUNED" "NAME;TUNING;TUNING_GPU" "SPECS;ARCHS")
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
  # A GPU name without a database would be silently ignored: most likely the
  # variable holding the database's path is empty or misspelt.
  if(NOT "${ARG_TUNING_GPU}" STREQUAL "" AND "${ARG_TUNING}" STREQUAL "")
    message(FATAL_ERROR "convgen_add_library(${target}): TUNING_GPU \"${ARG_TUNING_GPU}\" names the GPU of a "
                        "tuning database; give the database with TUNING <db.yaml>")
  endif()
  if(ARG_ALLOW_UNTUNED AND "${ARG_TUNING}" STREQUAL "")
    message(FATAL_ERROR "convgen_add_library(${target}): ALLOW_UNTUNED accepts a tuning database without entries "
                        "for TUNING_GPU; give the database with TUNING <db.yaml>")
  endif()

  set(specs "")
  foreach(spec IN LISTS ARG_SPECS)
    get_filename_component(spec "${spec}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND specs "${spec}")
  endforeach()
  set(gen_args "")
  if(ARG_NAME)
    set(gen_args --name "${ARG_NAME}")
  endif()
  if(ARG_SKIP_INVALID)
    list(APPEND gen_args --skip-invalid)
  endif()
  # The database is an input like the specs: passed to both the configure-time
  # query and the build-time generator, so the two agree on the kernels.
  set(tuning "")
  if(NOT "${ARG_TUNING}" STREQUAL "")
    get_filename_component(tuning "${ARG_TUNING}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${tuning}" OR IS_DIRECTORY "${tuning}")
      message(FATAL_ERROR "convgen_add_library(${target}): TUNING ${tuning}: no such file")
    endif()
    list(APPEND gen_args --tuning "${tuning}")
    if(NOT "${ARG_TUNING_GPU}" STREQUAL "")
      list(APPEND gen_args --tuning-gpu "${ARG_TUNING_GPU}")
    endif()
    if(ARG_ALLOW_UNTUNED)
      list(APPEND gen_args --allow-untuned)
    endif()
  endif()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/${target}.convgen")

  # The file names depend on the specs: re-configure when one changes. The
  # database names no files, but re-configuring re-checks it (its errors and
  # stale entries are reported here rather than only in the build).
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${specs} ${tuning})
  execute_process(
    COMMAND "${CONVGEN_QUERY_EXECUTABLE}" outputs ${specs} ${gen_args} --templates "${CONVGEN_TEMPLATE_DIR}"
    WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE names ERROR_VARIABLE errors)
  if(rc EQUAL 2)
    # A usage error: a spec path that is no file, or a TUNING_GPU that the
    # database holds no entry for (the message says which, and what to do).
    message(FATAL_ERROR "convgen_add_library(${target}): convgen refused its arguments:\n${errors}")
  elseif(NOT rc EQUAL 0)
    set(inputs "the specs are")
    if(tuning)
      set(inputs "the specs or the tuning database are")
    endif()
    message(FATAL_ERROR "convgen_add_library(${target}): ${inputs} invalid:\n${errors}")
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

  file(GLOB templates CONFIGURE_DEPENDS "${CONVGEN_TEMPLATE_DIR}/*.mustache" "${CONVGEN_TEMPLATE_DIR}/partials/*.mustache")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "${CONVGEN_EXECUTABLE}" generate ${specs} ${gen_args} --templates "${CONVGEN_TEMPLATE_DIR}"
            --out "${out_dir}" --prune
    DEPENDS "${CONVGEN_EXECUTABLE}" ${specs} ${tuning} ${templates}
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
