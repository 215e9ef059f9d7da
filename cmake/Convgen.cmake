# convgen_add_library(<target> SPECS <spec.yaml>... [NAME <c_identifier>] [ARCHS <arch>...]
#                     [SKIP_INVALID] [NO_LOCAL_MEMORY]
#                     [TUNING <db.yaml> [TUNING_GPU <gpu name>] [ALLOW_UNTUNED]
#                                     [ALLOW_UNVERIFIED_TUNING]])
#
# Generates specialized CUDA convolution kernels from the specs at build time
# and returns <target>, an ordinary static library. Link it and include
# <name>.h; the library name comes from NAME, else from the specs' `library`
# key. SKIP_INVALID leaves invalid workloads out (reported when configuring)
# instead of failing. One translation unit per kernel, so kernels compile in parallel and an
# edited spec recompiles only the kernels whose text changed.
#
# NO_LOCAL_MEMORY fails the build of a kernel that uses local memory (a
# stack frame or register spills) on any of its GPUs: ptxas's warnings about
# it, as errors (CONVGEN_NO_LOCAL_MEMORY_FLAGS). The shipped seeds and
# mobilenet_v2 libraries build with it; a few default schedules elsewhere
# still spill 4-72 bytes (docs/performance.md, "Local memory in twelve
# benchmark kernels"), as a schedule set in a spec or a tuning database may.
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
# Each entry carries a checksum of its content: an entry edited after convgen
# wrote it stops the configure, naming its line; ALLOW_UNVERIFIED_TUNING uses
# it instead, noted and listed as unverified (`convgen vouch` re-signs a
# database whose entries you vouch for).
# Applying needs no GPU: the build machine only reads the file. An entry
# tuned against another generator or template (stale fingerprint) is
# reported when configuring and not applied. Editing the database re-runs
# the generator, which rewrites only the kernels whose schedule changed, so
# only those recompile (and the registry, which lists the schedules).
# Relative paths (specs, TUNING) are relative to the calling CMakeLists.txt.
#
# ARCHS names the GPUs to build for, as CMake's CUDA_ARCHITECTURES does
# (75, 80-real, 90-virtual; native; all; all-major). The schedules fit the
# tightest GPU of the list and the default rule sizes them for the newest
# (`convgen archs` prints the facts it uses). Without ARCHS: the project's
# CMAKE_CUDA_ARCHITECTURES when the project set it (-D, CUDAARCHS, or set()
# before project()); else the GPUs of this machine (native, CMake 3.24+);
# else `convgen archs --default` (75-real;80-real;86-real;89-real;90). An
# arch below sm_75 (sm_70 with CUDA 12), or one the CUDA toolkit cannot
# compile for, fails the configure. At run time, a call on a GPU the library
# holds no image for returns StatusCode::kUnsupportedDevice naming the arch
# to add.
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

# NO_LOCAL_MEMORY's nvcc flags: ptxas warns of a stack frame or spills in any
# function, and fails on the warning.
set(CONVGEN_NO_LOCAL_MEMORY_FLAGS "-Xptxas=-warn-lmem-usage,-warn-spills,-Werror")

# CUTLASS's headers, for the kernels of the implicit_gemm algorithms (dense
# convolution on tensor cores), whose main loop is CUTLASS's, and of the
# winograd_nonfused algorithm (float32 NCHW 3x3 layers), whose batched GEMM
# is. CONVGEN_CUTLASS_INCLUDE_DIR names the folder holding cutlass/cutlass.h;
# left empty, it is that of the nvidia-cutlass Python package
# (scripts/install_deps.sh installs the pinned version). Without them a
# library still builds every other kernel; such a kernel's source then stops
# the build with an #error saying what to install.
#
# CONVGEN_CUTLASS_VERSION is the CUTLASS the kernels are built and tested
# with (the nvidia-cutlass wheel's version; scripts/install_deps.sh reads it
# here): a kernel's main loop is CUTLASS's template, and the tests vouch for
# this one. A CONVGEN_CUTLASS_INCLUDE_DIR of an older CUTLASS fails the
# configure, a newer one's builds with a warning; an older Python package's
# headers are not taken (a warning), as if there were none.
set(CONVGEN_CUTLASS_VERSION 4.2.0.0)
set(CONVGEN_CUTLASS_INCLUDE_DIR "" CACHE PATH "CUTLASS's include folder (holds cutlass/cutlass.h); empty: the nvidia-cutlass Python package's")
string(REGEX MATCH "^[0-9]+\\.[0-9]+\\.[0-9]+" _convgen_cutlass_tested "${CONVGEN_CUTLASS_VERSION}")
set(_convgen_cutlass_install "scripts/install_deps.sh installs it, as the nvidia-cutlass wheel ${CONVGEN_CUTLASS_VERSION}")
# Sets <out_var> to the CUTLASS version (MAJOR.MINOR.PATCH) of the include
# folder `dir`, from its cutlass/version.h; to "" where it states none.
function(_convgen_cutlass_version dir out_var)
  set(found "")
  if(EXISTS "${dir}/cutlass/version.h")
    file(STRINGS "${dir}/cutlass/version.h" defines REGEX "^#define CUTLASS_(MAJOR|MINOR|PATCH) +[0-9]+")
    foreach(part MAJOR MINOR PATCH)
      if("${defines}" MATCHES "CUTLASS_${part} +([0-9]+)")
        list(APPEND found "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endif()
  list(LENGTH found parts)
  if(parts EQUAL 3)
    list(JOIN found "." found)
  else()
    set(found "")
  endif()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()
if(NOT CONVGEN_CUTLASS_INCLUDE_DIR)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(
      COMMAND "${Python3_EXECUTABLE}" -c
              "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source', 'include'))"
      RESULT_VARIABLE _convgen_rc OUTPUT_VARIABLE _convgen_cutlass OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_convgen_rc EQUAL 0 AND EXISTS "${_convgen_cutlass}/cutlass/cutlass.h")
      _convgen_cutlass_version("${_convgen_cutlass}" _convgen_found)
      if(_convgen_found AND NOT _convgen_found VERSION_LESS _convgen_cutlass_tested)
        set(CONVGEN_CUTLASS_INCLUDE_DIR "${_convgen_cutlass}" CACHE PATH
            "CUTLASS's include folder (holds cutlass/cutlass.h); empty: the nvidia-cutlass Python package's" FORCE)
      else()
        message(WARNING "convgen: the nvidia-cutlass Python package's headers (${_convgen_cutlass}) are CUTLASS "
                        "'${_convgen_found}', older than the ${_convgen_cutlass_tested} convgen's kernels are tested "
                        "with: not taken, so the kernels that need CUTLASS stop the build with an #error "
                        "(${_convgen_cutlass_install})")
      endif()
    endif()
  endif()
endif()
if(CONVGEN_CUTLASS_INCLUDE_DIR)
  _convgen_cutlass_version("${CONVGEN_CUTLASS_INCLUDE_DIR}" _convgen_found)
  if(NOT _convgen_found)
    message(FATAL_ERROR "CONVGEN_CUTLASS_INCLUDE_DIR (${CONVGEN_CUTLASS_INCLUDE_DIR}) has no cutlass/version.h "
                        "stating CUTLASS_MAJOR, _MINOR and _PATCH: name the include folder of CUTLASS "
                        "${_convgen_cutlass_tested} (${_convgen_cutlass_install})")
  elseif(_convgen_found VERSION_LESS _convgen_cutlass_tested)
    message(FATAL_ERROR "CONVGEN_CUTLASS_INCLUDE_DIR (${CONVGEN_CUTLASS_INCLUDE_DIR}) holds CUTLASS ${_convgen_found}; "
                        "convgen's kernels are built and tested with CUTLASS ${_convgen_cutlass_tested} and need "
                        "it or newer (${_convgen_cutlass_install})")
  elseif(_convgen_found VERSION_GREATER _convgen_cutlass_tested)
    message(WARNING "CONVGEN_CUTLASS_INCLUDE_DIR (${CONVGEN_CUTLASS_INCLUDE_DIR}) holds CUTLASS ${_convgen_found}, "
                    "newer than the ${_convgen_cutlass_tested} that convgen's kernels are tested with: rerun the "
                    "GPU tests before relying on them")
  endif()
  set_property(GLOBAL PROPERTY CONVGEN_CUTLASS_INCLUDE_DIR "${CONVGEN_CUTLASS_INCLUDE_DIR}")
  # The sm_90 main loop also includes CUTLASS's utilities (packed strides):
  # an installed CUTLASS keeps them in its include folder, its source tree
  # and the wheel beside it, in ../tools/util/include.
  set(_convgen_util "${CONVGEN_CUTLASS_INCLUDE_DIR}/../tools/util/include")
  if(EXISTS "${_convgen_util}/cutlass/util/packed_stride.hpp")
    set_property(GLOBAL PROPERTY CONVGEN_CUTLASS_UTIL_DIR "${_convgen_util}")
  elseif(NOT EXISTS "${CONVGEN_CUTLASS_INCLUDE_DIR}/cutlass/util/packed_stride.hpp")
    message(WARNING "convgen: CUTLASS's utilities (cutlass/util/packed_stride.hpp) are neither in "
                    "CONVGEN_CUTLASS_INCLUDE_DIR (${CONVGEN_CUTLASS_INCLUDE_DIR}) nor beside it in "
                    "../tools/util/include, where CUTLASS's source tree and the nvidia-cutlass wheel keep them: "
                    "kernels of the implicit_gemm_sm90 algorithms (libraries built for sm_90) will not compile")
  endif()
endif()

# Fails the configure, after `context`, when the generator's table rejects
# the architecture list `archs` (below the oldest arch, malformed, or not
# compiled by this CUDA toolkit). Sets <ok_var> instead of failing when given.
function(_convgen_check_archs context archs)
  string(REPLACE ";" "," archs "${archs}")
  execute_process(
    COMMAND "${CONVGEN_QUERY_EXECUTABLE}" archs --check "${archs}" --cuda-version "${CMAKE_CUDA_COMPILER_VERSION}"
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE errors)
  if(ARGC GREATER 2)
    if(rc EQUAL 0)
      set(${ARGV2} TRUE PARENT_SCOPE)
    else()
      set(${ARGV2} FALSE PARENT_SCOPE)
    endif()
  elseif(NOT rc EQUAL 0)
    string(REGEX REPLACE "^convgen: error: " "" errors "${errors}")
    message(FATAL_ERROR "${context}: ${errors}`convgen archs` lists the GPUs convgen builds for.")
  endif()
  # An arch convgen's table lacks (newer than it) is checked against what
  # this nvcc compiles (--list-gpu-arch), so that the build does not fail on it.
  if(rc EQUAL 0 AND errors MATCHES "not in convgen's table" AND CMAKE_CUDA_COMPILER)
    get_property(compiled GLOBAL PROPERTY _CONVGEN_NVCC_ARCHS)
    if(NOT compiled)
      execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-arch
                      RESULT_VARIABLE list_rc OUTPUT_VARIABLE compiled ERROR_QUIET)
      if(NOT list_rc EQUAL 0)
        set(compiled "?")  # an nvcc without the option: the build says
      endif()
      set_property(GLOBAL PROPERTY _CONVGEN_NVCC_ARCHS "${compiled}")
    endif()
    string(REPLACE "," ";" entries "${archs}")
    foreach(entry IN LISTS entries)
      if(compiled STREQUAL "?" OR NOT entry MATCHES "^([0-9]+)[af]?(-real|-virtual)?$")
        continue()  # all, all-major, native: CMake's to resolve
      endif()
      set(sm "${CMAKE_MATCH_1}")
      if(NOT compiled MATCHES "compute_${sm}([^0-9]|$)")
        string(REGEX REPLACE "[\n ]+" " " listed "${compiled}")
        string(STRIP "${listed}" listed)
        if(ARGC GREATER 2)
          set(${ARGV2} FALSE PARENT_SCOPE)
        else()
          message(FATAL_ERROR "${context}: ${CMAKE_CUDA_COMPILER} (CUDA ${CMAKE_CUDA_COMPILER_VERSION}) does not "
                              "compile for sm_${sm}; it compiles ${listed}")
        endif()
      endif()
    endforeach()
  endif()
endfunction()

# The architecture list `archs` with sm_90's real image made sm_90a: 90
# becomes 90a-real;90-virtual, 90-real becomes 90a-real (CUDA 12.0 and
# later; an explicit 90a stays).
function(_convgen_sm90a_archs archs out)
  set(mapped "")
  foreach(arch IN LISTS archs)
    if(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0 AND arch STREQUAL "90")
      list(APPEND mapped "90a-real" "90-virtual")
    elseif(CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0 AND arch STREQUAL "90-real")
      list(APPEND mapped "90a-real")
    else()
      list(APPEND mapped "${arch}")
    endif()
  endforeach()
  set(${out} "${mapped}" PARENT_SCOPE)
endfunction()

# Whether the project chose CMAKE_CUDA_ARCHITECTURES (-D, CUDAARCHS, set()
# before project()) rather than left it to CMake, which fills in the
# compiler's default and caches it with the help string "CUDA architectures".
function(_convgen_project_chose_archs out)
  set(chose FALSE)
  if(DEFINED ENV{CUDAARCHS} AND NOT "$ENV{CUDAARCHS}" STREQUAL "")
    set(chose TRUE)
  elseif(DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "")
    set(chose TRUE)
    if(DEFINED CACHE{CMAKE_CUDA_ARCHITECTURES} AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "$CACHE{CMAKE_CUDA_ARCHITECTURES}")
      get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
      if(help STREQUAL "CUDA architectures")
        set(chose FALSE)
      endif()
    endif()
  endif()
  set(${out} ${chose} PARENT_SCOPE)
endfunction()

# The architecture list of a library: ARCHS as given, else the default
# above; native, all and all-major resolved to numbers. Sets <out> and
# <out>_ORIGIN (words for the configure log).
function(_convgen_resolve_archs target archs out)
  set(origin "ARCHS")
  if("${archs}" STREQUAL "")
    _convgen_project_chose_archs(chose)
    if(chose)
      set(archs "${CMAKE_CUDA_ARCHITECTURES}")
      set(origin "CMAKE_CUDA_ARCHITECTURES")
    elseif(CMAKE_VERSION VERSION_GREATER_EQUAL 3.24 AND CMAKE_CUDA_ARCHITECTURES_NATIVE)
      set(archs native)
      set(origin "the GPUs of this machine")
    else()
      execute_process(COMMAND "${CONVGEN_QUERY_EXECUTABLE}" archs --default
                      OUTPUT_VARIABLE archs OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "convgen_add_library(${target}): `convgen archs --default` failed")
      endif()
      set(origin "convgen's default list (no ARCHS, no CMAKE_CUDA_ARCHITECTURES, no GPU to detect)")
    endif()
  endif()
  if(archs STREQUAL "native")
    if(NOT CMAKE_CUDA_ARCHITECTURES_NATIVE)
      message(FATAL_ERROR "convgen_add_library(${target}): ${origin} is native, but CMake found no GPU on this "
                          "machine (or is older than 3.24); name the GPUs, e.g. ARCHS 90")
    endif()
    set(archs "${CMAKE_CUDA_ARCHITECTURES_NATIVE}")
  elseif(archs STREQUAL "all" OR archs STREQUAL "all-major")
    # CMake's list starts below what convgen (and new toolkits) build for:
    # keep the archs the generator's table takes with this toolkit.
    string(TOUPPER "${archs}" which)
    string(REPLACE "-" "_" which "${which}")
    set(kept "")
    foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES_${which})
      _convgen_check_archs("" "${arch}" ok)
      if(ok)
        list(APPEND kept "${arch}")
      endif()
    endforeach()
    set(archs "${kept}")
  endif()
  set(${out} "${archs}" PARENT_SCOPE)
  set(${out}_ORIGIN "${origin}" PARENT_SCOPE)
endfunction()

function(convgen_add_library target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "SKIP_INVALID;NO_LOCAL_MEMORY;ALLOW_UNTUNED;ALLOW_UNVERIFIED_TUNING" "NAME;TUNING;TUNING_GPU" "SPECS;ARCHS")
  # PARSE_ARGV keeps a quoted list (ARCHS "75;90", SPECS "${my_specs}") as
  # one value with its semicolons escaped: split it, as a list is meant.
  string(REPLACE "\\;" ";" ARG_SPECS "${ARG_SPECS}")
  string(REPLACE "\\;" ";" ARG_ARCHS "${ARG_ARCHS}")
  if("${ARG_ARCHS}" MATCHES ",")
    message(FATAL_ERROR "convgen_add_library(${target}): ARCHS \"${ARG_ARCHS}\" is a CMake list, as "
                        "CUDA_ARCHITECTURES is: ARCHS 75 90, or ARCHS \"75;90\", not commas")
  endif()
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
  if(ARG_ALLOW_UNVERIFIED_TUNING AND "${ARG_TUNING}" STREQUAL "")
    message(FATAL_ERROR "convgen_add_library(${target}): ALLOW_UNVERIFIED_TUNING accepts tuning entries whose "
                        "checksum fails; give the database with TUNING <db.yaml>")
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
    if(ARG_ALLOW_UNVERIFIED_TUNING)
      list(APPEND gen_args --allow-unverified-tuning)
    endif()
  endif()
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  list(FIND languages CUDA cuda_at)
  if(cuda_at EQUAL -1)
    message(FATAL_ERROR "convgen_add_library(${target}): the generated kernels are CUDA sources; enable the CUDA "
                        "language first (project(... LANGUAGES CXX CUDA) or enable_language(CUDA))")
  endif()
  _convgen_resolve_archs(${target} "${ARG_ARCHS}" archs)
  # Commas: a CMake list would split the option's value into arguments.
  string(REPLACE ";" "," archs_option "${archs}")
  _convgen_check_archs("convgen_add_library(${target}): CUDA architectures \"${archs}\" (from ${archs_ORIGIN})"
                       "${archs}")
  if(NOT archs_ORIGIN STREQUAL "ARCHS")
    message(STATUS "convgen_add_library(${target}): CUDA architectures ${archs} (from ${archs_ORIGIN})")
  endif()
  # sm_90's machine code is built as sm_90a, the arch-specific code that
  # holds wgmma and TMA (implicit_gemm_sm90), where the library's kernels
  # use them: it runs on every sm_90 GPU, and its PTX (90's -virtual part)
  # stays plain sm_90 for newer GPUs. A library without such kernels keeps
  # the list as given (one compiler pass for 90's PTX and machine code,
  # where 90a-real;90-virtual takes two).
  _convgen_sm90a_archs("${archs}" cuda_archs)
  if(NOT cuda_archs STREQUAL archs)
    string(REPLACE ";" "," mapped_option "${cuda_archs}")
    execute_process(
      COMMAND "${CONVGEN_QUERY_EXECUTABLE}" outputs ${specs} ${gen_args} --archs "${mapped_option}"
              --templates "${CONVGEN_TEMPLATE_DIR}" --arch-images
      WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
      RESULT_VARIABLE rc OUTPUT_VARIABLE images ERROR_QUIET)
    if(NOT rc EQUAL 0 OR NOT images MATCHES "90a")
      set(cuda_archs "${archs}")
    endif()
  endif()
  string(REPLACE ";" "," archs_option "${cuda_archs}")
  list(APPEND gen_args --archs "${archs_option}")
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
  # The names include the library's manifest (<library>.manifest, the files'
  # hashes that --prune reads): an output too, so a deleted one is remade.
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

  # The folder is this target's alone. A manifest of another library in it
  # is this target's own, from before its library was renamed (NAME, or the
  # spec's `library:`): the generator would refuse to replace the kernel
  # files that manifest lists (another library's, for all it knows).
  set(manifest "")
  foreach(name IN LISTS names)
    if(name MATCHES "\\.manifest$")
      set(manifest "${name}")
    endif()
  endforeach()
  file(GLOB old_manifests "${out_dir}/*.manifest")
  foreach(old IN LISTS old_manifests)
    get_filename_component(old_name "${old}" NAME)
    if(NOT old_name STREQUAL manifest)
      message(STATUS "convgen_add_library(${target}): removing ${old_name}, the manifest of the library this "
                     "target made before (now ${manifest})")
      file(REMOVE "${old}")
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

  string(REGEX REPLACE "\\.manifest$" "" library "${manifest}")
  add_library(${target} STATIC ${sources})
  # Installed (install(TARGETS ... EXPORT ...)), a library's users find its
  # header in the prefix's include/: install it there from the target's
  # CONVGEN_HEADER (README, "Installing a generated library").
  target_include_directories(${target} PUBLIC "$<BUILD_INTERFACE:${out_dir}>" "$<INSTALL_INTERFACE:include>")
  set_target_properties(${target} PROPERTIES CONVGEN_HEADER "${out_dir}/${library}.h")
  target_link_libraries(${target} PUBLIC convgen::runtime)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES "${cuda_archs}")
  # Kernels need only fast host code; -lineinfo keeps profiles readable.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  get_property(cutlass GLOBAL PROPERTY CONVGEN_CUTLASS_INCLUDE_DIR)
  if(cutlass)
    # CUTLASS's host-and-device code calls constexpr host functions (as its own build allows).
    target_include_directories(${target} SYSTEM PRIVATE "${cutlass}")
    get_property(cutlass_util GLOBAL PROPERTY CONVGEN_CUTLASS_UTIL_DIR)
    if(cutlass_util)
      target_include_directories(${target} SYSTEM PRIVATE "${cutlass_util}")
    endif()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
  endif()
  if(ARG_NO_LOCAL_MEMORY)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:${CONVGEN_NO_LOCAL_MEMORY_FLAGS}>")
  endif()
endfunction()
