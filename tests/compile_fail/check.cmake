# Compiles one compile-fail source and checks that the compiler rejects it with every message that
# the source names, in lines of these forms:
#   // expect: <regex>        the compiler output matches the CMake regular expression
#   // expect text: <text>    the compiler output contains the text verbatim
#   // expect no text: <text> the compiler output does not contain the text (what Partita's
#                             message must spare the user, such as a cascade of the compiler's own)
# A diagnostic's whole message goes in an `expect text` line, so that rewording it fails its test
# until the test is updated with it. A line written `// expect (GNU): ...` or
# `// expect text (Clang): ...` applies only when COMPILER (CMAKE_CXX_COMPILER_ID) is that one:
# the compilers agree on Partita's messages but spell types and the static_assert prefix apart.
#
# cmake -DBUILD_DIR=<build> -DTARGET=<target> -DSOURCE=<expectations> [-DCOMPILED=<source>]
#       -DCOMPILER=<id> -P check.cmake
# COMPILED (default SOURCE) is compiled with the command CMake wrote for it in
# BUILD_DIR/compile_commands.json, as -fsyntax-only: the build tree is not touched, so these tests
# run in parallel with each other and with builds.
if(NOT DEFINED COMPILED)
  set(COMPILED "${SOURCE}")
endif()
file(READ "${BUILD_DIR}/compile_commands.json" commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(command "")
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  if(file STREQUAL COMPILED)
    string(JSON command GET "${commands}" ${i} command)
    string(JSON directory GET "${commands}" ${i} directory)
    break()
  endif()
endforeach()
if(command STREQUAL "")
  message(FATAL_ERROR "${TARGET}: no compile command for ${COMPILED} in ${BUILD_DIR}/compile_commands.json")
endif()
separate_arguments(words UNIX_COMMAND "${command}")
# Without the outputs of a build: the object file and the dependency file.
set(args "")
set(skip_next FALSE)
foreach(word IN LISTS words)
  if(skip_next)
    set(skip_next FALSE)
  elseif(word STREQUAL "-o" OR word STREQUAL "-MT" OR word STREQUAL "-MF")
    set(skip_next TRUE)
  elseif(NOT word STREQUAL "-MD" AND NOT word STREQUAL "-c")
    list(APPEND args "${word}")
  endif()
endforeach()
execute_process(COMMAND ${args} -fsyntax-only WORKING_DIRECTORY "${directory}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(log "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but it must be rejected")
endif()

file(STRINGS "${SOURCE}" expectations REGEX "^// expect( text| no text)?( \\([A-Za-z]+\\))?: ")
if(NOT expectations)
  message(FATAL_ERROR "${SOURCE} names no expected message")
endif()
foreach(line IN LISTS expectations)
  if(line MATCHES "^// expect( text| no text)? \\(([A-Za-z]+)\\): ")
    if(NOT CMAKE_MATCH_2 STREQUAL COMPILER)
      continue()
    endif()
    # (Separate replacements: CMake refuses a \\1 whose group did not take part in the match.)
    if(line MATCHES "^// expect text \\(")
      string(REGEX REPLACE "^// expect text \\([A-Za-z]+\\): " "// expect text: " line "${line}")
    elseif(line MATCHES "^// expect no text \\(")
      string(REGEX REPLACE "^// expect no text \\([A-Za-z]+\\): " "// expect no text: " line "${line}")
    else()
      string(REGEX REPLACE "^// expect \\([A-Za-z]+\\): " "// expect: " line "${line}")
    endif()
  endif()
  if(line MATCHES "^// expect no text: (.*)$")
    string(FIND "${log}" "${CMAKE_MATCH_1}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${TARGET}: the diagnostic has the text\n  ${CMAKE_MATCH_1}\n"
                          "--- compiler output ---\n${log}")
    endif()
  elseif(line MATCHES "^// expect text: (.*)$")
    string(FIND "${log}" "${CMAKE_MATCH_1}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${TARGET}: the diagnostic lacks the text\n  ${CMAKE_MATCH_1}\n"
                          "--- compiler output ---\n${log}")
    endif()
  else()
    string(REGEX REPLACE "^// expect: " "" regex "${line}")
    if(NOT log MATCHES "${regex}")
      message(FATAL_ERROR "${TARGET}: the diagnostic lacks /${regex}/\n--- compiler output ---\n${log}")
    endif()
  endif()
endforeach()
