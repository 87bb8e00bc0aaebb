# Small helpers so every module, test and benchmark is declared the same way.

# sluice_add_module(NAME SOURCES ... DEPS ...): a static library for one module folder. Includes
# are rooted at the repository root (or at include/sluice once installed).
function(sluice_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(sluice_${name} STATIC ${ARG_SOURCES})
  target_include_directories(sluice_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/sluice>)
  target_link_libraries(sluice_${name} PUBLIC ${ARG_DEPS})
  # The headers are C++20: whoever links a module (the installed package's users too) compiles
  # with at least that, whatever their own CMAKE_CXX_STANDARD.
  target_compile_features(sluice_${name} PUBLIC cxx_std_20)
  set_property(GLOBAL APPEND PROPERTY SLUICE_MODULES sluice_${name})
endfunction()

# sluice_add_test(NAME SOURCES ... [DEPS ...] [LABELS ...]): a GoogleTest binary registered with ctest.
function(sluice_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE sluice ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  include(GoogleTest)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
endfunction()

# sluice_add_benchmark(NAME SOURCES ... [DEPS ...]): a Google Benchmark binary under build/bench.
function(sluice_add_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE sluice ${ARG_DEPS} benchmark::benchmark)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bench)
endfunction()
