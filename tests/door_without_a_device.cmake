# A front door whose counter device cannot open (an unknown TALLY_BACKEND, a
# bad TALLY_PROFILE) advertises nothing it cannot serve: a third-party
# program that prints what its API offers prints exactly what it prints
# without tally, exits the same, and the door says why once. Run with
#   -DPROGRAM="program|args"   what lists the API's offer (vulkaninfo, clinfo...)
#   -DBASE="VAR=value|..."      the environment of both runs
#   -DDOOR="VAR=value|..."      what puts the door in (LD_PRELOAD, layers)
#   -DBROKEN="VAR=value"        what keeps the device from opening
#   -DSAYS="regex"              the door's one line about it
#   -DHIDDEN="regex"            what the door would add when it works
string(REPLACE "|" ";" program "${PROGRAM}")
string(REPLACE "|" ";" base "${BASE}")
string(REPLACE "|" ";" door "${DOOR}")

execute_process(COMMAND ${CMAKE_COMMAND} -E env ${base} ${program}
                OUTPUT_VARIABLE plain ERROR_VARIABLE plain_err RESULT_VARIABLE plain_rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E env ${base} ${door} ${BROKEN} ${program}
                OUTPUT_VARIABLE shimmed ERROR_VARIABLE err RESULT_VARIABLE rc)

if(NOT plain_rc STREQUAL rc)
  message(FATAL_ERROR "exit ${rc} with the door, ${plain_rc} without\n${err}")
endif()
if(shimmed MATCHES "${HIDDEN}")
  message(FATAL_ERROR "the door advertised ${CMAKE_MATCH_0} without a device")
endif()
if(NOT plain STREQUAL shimmed)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/without.txt "${plain}")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/with.txt "${shimmed}")
  message(FATAL_ERROR "the program printed otherwise with the door: compare "
                      "${CMAKE_CURRENT_BINARY_DIR}/without.txt and with.txt")
endif()
foreach(line "tally: cannot open the device: " "${SAYS}")
  string(REGEX MATCHALL "${line}" found "${err}")
  list(LENGTH found times)
  if(NOT times EQUAL 1)
    message(FATAL_ERROR "\"${line}\" said ${times} times, not once:\n${err}")
  endif()
endforeach()
