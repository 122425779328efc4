# gz_add_test(NAME name SOURCES a.c ... [LIBS lib ...] [RANKS 1 3 5]
#             [LABELS l ...] [ARGS ...] [TIMEOUT s])
# Builds one test executable and registers it once per rank count (as
# name.np<N> under mpirun) or once without mpirun when RANKS is absent.
set(GZ_MPIEXEC_EXTRA_FLAGS --oversubscribe CACHE STRING "Extra mpiexec flags for tests")
function(gz_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;RANKS;LABELS;ARGS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE gz_testlib ${T_LIBS})
  gz_apply_flags(${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(_env "GZ_DATA_DIR=${GZ_DATA_DIR};OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  if(T_RANKS)
    # Open MPI's own start-up allocations are not freed at exit: leak
    # detection stays on for the tests that run without mpirun only.
    list(APPEND _env "ASAN_OPTIONS=detect_leaks=0")
    foreach(np ${T_RANKS})
      add_test(NAME ${T_NAME}.np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                       ${GZ_MPIEXEC_EXTRA_FLAGS} $<TARGET_FILE:${T_NAME}> ${T_ARGS})
      set_tests_properties(${T_NAME}.np${np} PROPERTIES LABELS "mpi;${T_LABELS}"
                           TIMEOUT ${T_TIMEOUT} ENVIRONMENT "${_env}" SKIP_RETURN_CODE 77)
    endforeach()
  else()
    add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT}
                         ENVIRONMENT "${_env}" SKIP_RETURN_CODE 77)
  endif()
endfunction()
