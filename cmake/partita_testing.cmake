# Test helpers for builds against the amalgamated header single_include/partita/partita.hpp.
include_guard(GLOBAL)

if(NOT TARGET doctest::doctest)
  find_package(doctest REQUIRED CONFIG)
endif()

# Same dependencies as partita, but only single_include/ on the include path: a test built
# against it fails if the single header still needs a file from include/.
add_library(partita_single_header INTERFACE)
target_compile_features(partita_single_header INTERFACE cxx_std_20)
target_include_directories(partita_single_header INTERFACE "${partita_SOURCE_DIR}/single_include")
target_link_libraries(partita_single_header INTERFACE ${PARTITA_HANA_TARGET} xsimd)

# doctest's main, compiled once for all single-header tests; partita_test_main would bring
# include/ in through partita::partita.
add_library(partita_single_header_test_main STATIC "${partita_SOURCE_DIR}/tests/test_main.cpp")
target_link_libraries(partita_single_header_test_main PUBLIC partita_single_header doctest::doctest)

# partita_add_single_header_test(<name> <source>): a doctest executable and CTest test <name>
# that sees Partita only through the single header.
function(partita_add_single_header_test name source)
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE partita_single_header_test_main)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  add_test(NAME ${name} COMMAND ${name})
endfunction()
