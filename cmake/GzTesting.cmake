# Test registration helpers.
#
# gz_add_test(NAME name SOURCES a.c ... [LIBS lib ...] [RANKS 1 3 5]
#             [LABELS l ...] [ARGS ...] [TIMEOUT s])
#   Builds one test executable and registers it once per rank count (as
#   name.np<N> under mpirun) or once without mpirun when RANKS is absent.
# gz_test_program(VAR target)
#   VAR = the path tests run `target` by: the program itself, or under
#   GZ_TEST_LAUNCHER a generated wrapper that runs it under the launcher.
# gz_test_properties(name TIMEOUT s LABELS l ... [ENV k=v ...])
#   Time limit (times GZ_TEST_TIME_SCALE), labels, skip code 77 and the
#   environment every test needs (root mpirun, oversubscription, data).
#
# Memory checking (`bash scripts/gz.sh valgrind`) sets GZ_TEST_LAUNCHER, e.g.
# "valgrind;--error-exitcode=99", and GZ_TEST_TIME_SCALE: every program the
# suite starts (test executables, gzstack, the checkers and generators the
# scripts call) then runs under the launcher, and every time limit, the
# scripts' own included (they read GZ_TEST_TIME_SCALE), grows by the scale.
set(GZ_MPIEXEC_EXTRA_FLAGS --oversubscribe CACHE STRING "Extra mpiexec flags for tests")
set(GZ_TEST_LAUNCHER "" CACHE STRING "Command (a list) run in front of every program of the tests")
set(GZ_TEST_TIME_SCALE 1 CACHE STRING "Factor on every test time limit (for slow launchers)")

function(gz_test_program var target)
  if(NOT GZ_TEST_LAUNCHER)
    set(${var} $<TARGET_FILE:${target}> PARENT_SCOPE)
    return()
  endif()
  set(_wrapper ${CMAKE_BINARY_DIR}/launch/${target})
  set(${var} ${_wrapper} PARENT_SCOPE)
  get_property(_made GLOBAL PROPERTY GZ_TEST_WRAPPERS)
  if(target IN_LIST _made)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY GZ_TEST_WRAPPERS ${target})
  list(JOIN GZ_TEST_LAUNCHER " " _launcher)
  file(GENERATE OUTPUT ${_wrapper}
       CONTENT "#!/bin/sh\nexec ${_launcher} $<TARGET_FILE:${target}> \"$@\"\n"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                        WORLD_READ WORLD_EXECUTE)
endfunction()

function(gz_test_properties name)
  cmake_parse_arguments(T "" "TIMEOUT" "LABELS;ENV" ${ARGN})
  math(EXPR _timeout "${T_TIMEOUT} * ${GZ_TEST_TIME_SCALE}")
  # Each test's Open MPI session directories under a base of its own: two
  # tests run in parallel (ctest -j) would otherwise share /tmp/ompi.HOST.UID,
  # which the last process of one removes while the other creates its job's
  # directory in it ("A call to mkdir was unable to create ...", seen in CI).
  set(_session_base "${CMAKE_BINARY_DIR}/ompi-sessions/${name}")
  file(MAKE_DIRECTORY "${_session_base}")
  set(_env "GZ_DATA_DIR=${GZ_DATA_DIR}" "GZ_TEST_TIME_SCALE=${GZ_TEST_TIME_SCALE}"
           "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
           "OMPI_MCA_rmaps_base_oversubscribe=1" "OMPI_MCA_orte_tmpdir_base=${_session_base}"
           ${T_ENV})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${_timeout}
                       ENVIRONMENT "${_env}" SKIP_RETURN_CODE 77)
endfunction()

function(gz_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;RANKS;LABELS;ARGS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE gz_testlib ${T_LIBS})
  gz_apply_flags(${T_NAME})
  gz_test_program(_program ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(NOT T_RANKS)
    add_test(NAME ${T_NAME} COMMAND ${_program} ${T_ARGS})
    gz_test_properties(${T_NAME} TIMEOUT ${T_TIMEOUT} LABELS ${T_LABELS})
    return()
  endif()
  foreach(np ${T_RANKS})
    add_test(NAME ${T_NAME}.np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     ${GZ_MPIEXEC_EXTRA_FLAGS} ${_program} ${T_ARGS})
    # Open MPI's own start-up allocations are not freed at exit: leak
    # detection stays on for the tests that run without mpirun only.
    gz_test_properties(${T_NAME}.np${np} TIMEOUT ${T_TIMEOUT} LABELS mpi ${T_LABELS}
                       ENV ASAN_OPTIONS=detect_leaks=0)
  endforeach()
endfunction()
