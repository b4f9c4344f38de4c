# admitsim_add_test(NAME name SOURCES ... LIBS ... [LABELS ...])
# Builds one Catch2 binary and registers it with ctest as a single test
# (fast: one process per binary). Label "unit" is the default; long property
# budgets use "property-long", tests needing a real redis-server "redis".
# In a sanitizer tree (ADMITSIM_SANITIZE) the cases tagged [heavy] are passed
# over: each runs, many times over, paths that the tree's other tests run
# under the sanitizers too (docs/testing.md, "Heavy cases").
function(admitsim_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE admitsim_catch_main admitsim_common Catch2::Catch2 ${T_LIBS})
  admitsim_test_files_o1(${T_NAME})  # -O1 in an optimised build (CMakeLists.txt)
  set(spec)
  if(ADMITSIM_SANITIZE)
    set(spec "~[heavy]")
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${spec} --order decl --warn NoAssertions
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT 300)
endfunction()

# admitsim_test_cost(NAME RELEASE_SECONDS SANITIZED_SECONDS)
# A long test's measured time (ctest's COST), in the Release tree and in the sanitizer tree. ctest -j
# starts the costliest tests first; a fresh tree has no timings of its own yet (Testing/Temporary/
# CTestCostData.txt), so without these it would start them in the order they are defined and could
# finish with one long test running alone on one core.
# A test this tree does not define (a Release-only one in the sanitizer tree) is passed over.
function(admitsim_test_cost name release_seconds sanitized_seconds)
  if(NOT TEST ${name})
    return()
  endif()
  if(ADMITSIM_SANITIZE)
    set_tests_properties(${name} PROPERTIES COST ${sanitized_seconds})
  else()
    set_tests_properties(${name} PROPERTIES COST ${release_seconds})
  endif()
endfunction()
