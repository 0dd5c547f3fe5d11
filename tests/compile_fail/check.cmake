# Builds one compile-fail target and checks that the build fails with every message that the
# source's `// expect: <regex>` lines name.
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}"
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(log "${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but it must be rejected")
endif()
file(STRINGS "${SOURCE}" expectations REGEX "^// expect: ")
if(NOT expectations)
  message(FATAL_ERROR "${SOURCE} names no expected message")
endif()
foreach(line IN LISTS expectations)
  string(REGEX REPLACE "^// expect: " "" regex "${line}")
  if(NOT log MATCHES "${regex}")
    message(FATAL_ERROR "${TARGET}: the diagnostic lacks /${regex}/\n--- compiler output ---\n${log}")
  endif()
endforeach()
