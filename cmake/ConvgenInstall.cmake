# Installation and the CMake package config. After
#   cmake --install build --prefix <p>
# a project does find_package(convgen CONFIG REQUIRED) (with <p> in
# CMAKE_PREFIX_PATH) and gets:
#   convgen::runtime      the runtime static library (links CUDA::cudart_static)
#   convgen::convgen      the generator, an imported executable
#   convgen_add_library() wired to the installed generator and templates
#
# <p>/bin/convgen
# <p>/include/convgen/convgen.h
# <p>/lib/libconvgen_runtime.a
# <p>/share/convgen/templates/*.mustache
# <p>/lib/cmake/convgen/{convgenConfig,convgenConfigVersion,convgenTargets*,Convgen}.cmake
include(CMakePackageConfigHelpers)

# The same names as the package, for a project that uses add_subdirectory().
if(NOT TARGET convgen::convgen)
  add_executable(convgen::convgen ALIAS convgen)
endif()

# A project that adds convgen with add_subdirectory() installs its own things.
option(CONVGEN_INSTALL "Install the generator, the runtime and the CMake package" ${convgen_IS_TOP_LEVEL})
if(NOT CONVGEN_INSTALL)
  return()
endif()

set(CONVGEN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/convgen"
    CACHE STRING "Where the CMake package config goes, relative to the prefix")
set(CONVGEN_INSTALL_TEMPLATEDIR "${CMAKE_INSTALL_DATADIR}/convgen/templates")
mark_as_advanced(CONVGEN_INSTALL_CMAKEDIR)

install(TARGETS convgen EXPORT convgenTargets
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT convgen)
install(TARGETS convgen_runtime EXPORT convgenTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT convgen
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/convgen"
  DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT convgen
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/templates/"
  DESTINATION "${CONVGEN_INSTALL_TEMPLATEDIR}" COMPONENT convgen
  FILES_MATCHING PATTERN "*.mustache")

install(EXPORT convgenTargets
  NAMESPACE convgen::
  FILE convgenTargets.cmake
  DESTINATION "${CONVGEN_INSTALL_CMAKEDIR}" COMPONENT convgen)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/convgenConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/convgenConfig.cmake"
  INSTALL_DESTINATION "${CONVGEN_INSTALL_CMAKEDIR}"
  PATH_VARS CMAKE_INSTALL_BINDIR CONVGEN_INSTALL_TEMPLATEDIR)
# The generated code and the runtime change together within a minor version.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/convgenConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/convgenConfig.cmake"
  "${PROJECT_BINARY_DIR}/convgenConfigVersion.cmake"
  "${PROJECT_SOURCE_DIR}/cmake/Convgen.cmake"
  DESTINATION "${CONVGEN_INSTALL_CMAKEDIR}" COMPONENT convgen)
