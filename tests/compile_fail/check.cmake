# Builds one compile-fail target and checks that the build fails with every message that the
# source names, in lines of these forms:
#   // expect: <regex>        the compiler output matches the CMake regular expression
#   // expect text: <text>    the compiler output contains the text verbatim
#   // expect no text: <text> the compiler output does not contain the text (what Partita's
#                             message must spare the user, such as a cascade of the compiler's own)
# A diagnostic's whole message goes in an `expect text` line, so that rewording it fails its test
# until the test is updated with it. A line written `// expect (GNU): ...` or
# `// expect text (Clang): ...` applies only when COMPILER (CMAKE_CXX_COMPILER_ID) is that one:
# the compilers agree on Partita's messages but spell types and the static_assert prefix apart.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}"
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
