# `tally demo` is simgpu's built-in workload: canonical commands with no GPU
# work under them. Under TALLY_BACKEND=driver it runs on simgpu all the same,
# prints simgpu's table byte for byte (not the zeros a measuring backend
# would give) and says in one line how to measure a real program; under
# simgpu it says nothing; an unknown backend is still an error.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=TALLY_BACKEND ${TALLY} demo
                OUTPUT_VARIABLE plain ERROR_VARIABLE plain_err RESULT_VARIABLE plain_rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E env TALLY_BACKEND=driver ${TALLY} demo
                OUTPUT_VARIABLE driver ERROR_VARIABLE driver_err RESULT_VARIABLE driver_rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E env TALLY_BACKEND=nosuchgpu ${TALLY} demo
                OUTPUT_VARIABLE unknown ERROR_VARIABLE unknown_err RESULT_VARIABLE unknown_rc)
if(NOT plain_rc EQUAL 0 OR NOT driver_rc EQUAL 0)
  message(FATAL_ERROR "tally demo failed: ${plain_rc} ${driver_rc}\n${driver_err}")
endif()
if(NOT driver STREQUAL plain)
  message(FATAL_ERROR "under driver the demo printed other than simgpu's table:\n${driver}")
endif()
if(NOT driver MATCHES "^simgpu on ")
  message(FATAL_ERROR "the demo's table does not name simgpu:\n${driver}")
endif()
string(REGEX MATCHALL "tally run --backend driver -- ./app" says "${driver_err}")
list(LENGTH says times)
if(NOT times EQUAL 1)
  message(FATAL_ERROR "under driver the demo did not say once how to measure:\n${driver_err}")
endif()
if(plain_err MATCHES "tally run --backend")
  message(FATAL_ERROR "under simgpu the demo said something:\n${plain_err}")
endif()
if(unknown_rc EQUAL 0 OR NOT unknown_err MATCHES "unknown backend \"nosuchgpu\"")
  message(FATAL_ERROR "an unknown backend was not refused (${unknown_rc}):\n${unknown_err}")
endif()
