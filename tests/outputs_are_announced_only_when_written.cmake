# `tally demo` and `tally run` announce a report only when it was written:
# a destination that is a directory is refused with its path and reason and
# never followed by "written to", and an old file the program left alone is
# not announced as its report. Run with -DTALLY=<tally binary> -DWORKDIR=<dir>.
function(run_and_check description expect_rc must_match must_not_match)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORKDIR}
                  OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "${expect_rc}" OR NOT err MATCHES "${must_match}"
     OR (must_not_match AND err MATCHES "${must_not_match}"))
    message(FATAL_ERROR "${description}: exit ${rc} (expected ${expect_rc}), printed\n${err}\n"
                        "expected to match \"${must_match}\", not \"${must_not_match}\"")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR}/a_directory)

run_and_check("tally demo with a directory as TALLY_OUTPUT" 1
  "${WORKDIR}/a_directory: Is a directory" "written to"
  ${CMAKE_COMMAND} -E env TALLY_OUTPUT=${WORKDIR}/a_directory ${TALLY} demo)
run_and_check("tally demo with a directory as TALLY_TRACE" 1
  "${WORKDIR}/a_directory: Is a directory" "written to"
  ${CMAKE_COMMAND} -E env TALLY_TRACE=${WORKDIR}/a_directory ${TALLY} demo)
run_and_check("tally demo with a missing directory" 1
  "${WORKDIR}/missing/r.csv: No such file or directory" "written to"
  ${CMAKE_COMMAND} -E env TALLY_OUTPUT=${WORKDIR}/missing/r.csv ${TALLY} demo)
run_and_check("tally demo with a good path" 0 "report written to ${WORKDIR}/r.csv" ""
  ${CMAKE_COMMAND} -E env TALLY_OUTPUT=${WORKDIR}/r.csv ${TALLY} demo)

run_and_check("tally run -o a directory" 2 "--output a_directory is a directory" ""
  ${TALLY} run -o a_directory -- true)
file(WRITE ${WORKDIR}/old.csv "an old report\n")
run_and_check("tally run does not announce an old file" 0
  "no per-command report was written to ${WORKDIR}/old.csv" "report: "
  ${TALLY} run -o old.csv -- true)
