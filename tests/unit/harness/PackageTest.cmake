# ctest script: builds a generated-style project (package/CMakeLists.txt and
# LinearProgram.cpp as its train_step.cpp) against the RematRuntime package,
#   MODE=build    from the build tree (-DRematRuntime_DIR=<build>/lib/cmake/
#                 RematRuntime),
#   MODE=install  from `cmake --install <build> --component RematRuntime`
#                 into a scratch prefix (-DCMAKE_PREFIX_PATH=<prefix>),
# then runs the executable for three steps on random weights.
#
#   cmake -DMODE=build|install -DREMAT_BINARY_DIR=... -DPROJECT_DIR=...
#         -DWORK_DIR=... [-DGENERATOR=Ninja] -P PackageTest.cmake

foreach(var MODE REMAT_BINARY_DIR PROJECT_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "PackageTest.cmake needs -D${var}=...")
  endif()
endforeach()
if(NOT GENERATOR)
  set(GENERATOR "Unix Makefiles")
endif()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${status}): ${command}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(src ${WORK_DIR}/src)
file(MAKE_DIRECTORY ${src})
configure_file(${PROJECT_DIR}/CMakeLists.txt ${src}/CMakeLists.txt COPYONLY)
configure_file(${PROJECT_DIR}/../LinearProgram.cpp ${src}/train_step.cpp
               COPYONLY)
configure_file(${PROJECT_DIR}/../LinearModel.h ${src}/LinearModel.h COPYONLY)

if(MODE STREQUAL "build")
  set(find -DRematRuntime_DIR=${REMAT_BINARY_DIR}/lib/cmake/RematRuntime)
elseif(MODE STREQUAL "install")
  set(prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --install ${REMAT_BINARY_DIR} --prefix ${prefix}
      --component RematRuntime)
  foreach(file lib/cmake/RematRuntime/RematRuntimeConfig.cmake
               lib/libRematHarness.a include/remat/runtime/Program.h)
    if(NOT EXISTS ${prefix}/${file})
      message(FATAL_ERROR "the install lacks ${file}")
    endif()
  endforeach()
  set(find -DCMAKE_PREFIX_PATH=${prefix})
else()
  message(FATAL_ERROR "MODE must be build or install, not '${MODE}'")
endif()

run(${CMAKE_COMMAND} -S ${src} -B ${WORK_DIR}/build -G ${GENERATOR} ${find})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/train --steps 3 --random-weights)
message("${run_output}")
if(NOT run_output MATCHES "step 3/3 loss [0-9.]+ \\(")
  message(FATAL_ERROR "the executable did not train three steps")
endif()
