# The RematRuntime CMake package: what a generated training project uses,
#
#   find_package(RematRuntime CONFIG REQUIRED)
#   add_executable(train train_step.cpp)
#   target_link_libraries(train PRIVATE Remat::HarnessCPU)   # or HarnessCUDA
#
# found either in this build tree (-DRematRuntime_DIR=<build>/lib/cmake/
# RematRuntime) or in an install prefix (cmake --install <build> --prefix P
# [--component RematRuntime]; then -DCMAKE_PREFIX_PATH=P or
# -DRematRuntime_DIR=P/lib/cmake/RematRuntime). Included at the end of the
# top-level CMakeLists.txt, once every runtime target (the CUDA ones
# included) is defined.
#
# Exported targets (namespace Remat::, the name without its "Remat" prefix):
#   Remat::HarnessCPU   interface: RematHarness + RematDeviceCPU + their deps
#   Remat::HarnessCUDA  interface: RematHarness + RematDeviceCUDA (only when
#                       runtime/cuda defined RematDeviceCUDA)
#   Remat::Harness, Remat::DeviceCPU, Remat::RuntimeWire, Remat::RuntimeCPU and
#   whatever else those link from this project (found by walking their link
#   libraries, so a new internal dependency is exported without edits here).

set(REMAT_RUNTIME_VERSION 0.1.0)
set(REMAT_RUNTIME_CMAKE_DIR lib/cmake/RematRuntime)

if(TARGET RematDeviceCUDA AND NOT TARGET RematHarnessCUDA)
  add_library(RematHarnessCUDA INTERFACE)
  target_link_libraries(RematHarnessCUDA INTERFACE RematHarness
                        RematDeviceCUDA)
  add_library(Remat::HarnessCUDA ALIAS RematHarnessCUDA)
endif()

# The project's own (non-imported) targets reachable from `roots` through
# LINK_LIBRARIES / INTERFACE_LINK_LIBRARIES.
function(remat_local_link_closure out)
  set(result)
  set(queue ${ARGN})
  while(queue)
    list(POP_FRONT queue item)
    # $<LINK_ONLY:x> is how static libraries record private dependencies.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(NOT TARGET "${item}" OR "${item}" IN_LIST result)
      continue()
    endif()
    get_target_property(aliased "${item}" ALIASED_TARGET)
    if(aliased)
      list(APPEND queue "${aliased}")
      continue()
    endif()
    get_target_property(imported "${item}" IMPORTED)
    if(imported)
      continue()
    endif()
    list(APPEND result "${item}")
    get_target_property(type "${item}" TYPE)
    set(links)
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(links "${item}" LINK_LIBRARIES)
    endif()
    get_target_property(interfaceLinks "${item}" INTERFACE_LINK_LIBRARIES)
    foreach(link IN LISTS links interfaceLinks)
      if(link AND NOT link MATCHES "-NOTFOUND$")
        list(APPEND queue "${link}")
      endif()
    endforeach()
  endwhile()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

set(_remat_roots RematHarnessCPU)
set(REMAT_RUNTIME_HAS_CUDA OFF)
if(TARGET RematHarnessCUDA)
  list(APPEND _remat_roots RematHarnessCUDA)
  set(REMAT_RUNTIME_HAS_CUDA ON)
endif()
remat_local_link_closure(_remat_exported ${_remat_roots})
foreach(_remat_target IN LISTS _remat_exported)
  get_target_property(_remat_name ${_remat_target} EXPORT_NAME)
  if(NOT _remat_name)
    string(REGEX REPLACE "^Remat" "" _remat_name "${_remat_target}")
    set_target_properties(${_remat_target} PROPERTIES EXPORT_NAME ${_remat_name})
  endif()
endforeach()
message(STATUS "RematRuntime package exports: ${_remat_exported}")

install(TARGETS ${_remat_exported} EXPORT RematRuntimeTargets
        ARCHIVE DESTINATION lib COMPONENT RematRuntime
        LIBRARY DESTINATION lib COMPONENT RematRuntime
        INCLUDES DESTINATION include)
install(DIRECTORY ${REMAT_SOURCE_DIR}/runtime/include/
        DESTINATION include COMPONENT RematRuntime
        FILES_MATCHING PATTERN "*.h" PATTERN "*.inc" PATTERN "*.cuh")
install(EXPORT RematRuntimeTargets NAMESPACE Remat::
        DESTINATION ${REMAT_RUNTIME_CMAKE_DIR} COMPONENT RematRuntime)

# The build tree's copy of the package: the same targets, pointing at the
# build's libraries and the source's headers.
set(_remat_package_dir ${CMAKE_BINARY_DIR}/${REMAT_RUNTIME_CMAKE_DIR})
export(EXPORT RematRuntimeTargets NAMESPACE Remat::
       FILE ${_remat_package_dir}/RematRuntimeTargets.cmake)

include(CMakePackageConfigHelpers)
configure_file(${CMAKE_CURRENT_LIST_DIR}/RematRuntimeConfig.cmake.in
               ${_remat_package_dir}/RematRuntimeConfig.cmake @ONLY)
write_basic_package_version_file(
  ${_remat_package_dir}/RematRuntimeConfigVersion.cmake
  VERSION ${REMAT_RUNTIME_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${_remat_package_dir}/RematRuntimeConfig.cmake
              ${_remat_package_dir}/RematRuntimeConfigVersion.cmake
        DESTINATION ${REMAT_RUNTIME_CMAKE_DIR} COMPONENT RematRuntime)
