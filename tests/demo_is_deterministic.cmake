# Runs `tally demo` twice and fails unless both outputs are byte-identical
# and hold the table.
execute_process(COMMAND ${TALLY} demo OUTPUT_VARIABLE first RESULT_VARIABLE rc1)
execute_process(COMMAND ${TALLY} demo OUTPUT_VARIABLE second RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "tally demo failed: ${rc1} ${rc2}")
endif()
if(NOT first STREQUAL second)
  message(FATAL_ERROR "tally demo printed different output on two runs")
endif()
if(NOT first MATCHES "vkCmdDrawIndexed.*vkCmdDispatch")
  message(FATAL_ERROR "tally demo printed no table:\n${first}")
endif()
