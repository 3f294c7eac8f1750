# `tally run` checks every option before the program starts: a bad value
# exits with 2, says in exactly one line the option and what it accepts (for
# a counter, the nearest names), and the program never runs. Run with
# -DTALLY=<tally binary> -DWORKDIR=<scratch dir>.
file(REMOVE_RECURSE ${WORKDIR})
file(MAKE_DIRECTORY ${WORKDIR})
file(WRITE ${WORKDIR}/invalid.ini "nosuchkey = 1\n")
string(ASCII 27 escape)
string(ASCII 7 bell)

# refused(description expected-line-regex ARGS...): ARGS go before
# `-- PROGRAM`, which would leave a file behind if it ran.
function(refused description expected)
  file(REMOVE ${WORKDIR}/ran)
  execute_process(COMMAND ${ARGN} -- sh -c "touch ran" WORKING_DIRECTORY ${WORKDIR}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "^${expected}\n$" OR EXISTS ${WORKDIR}/ran)
    if(EXISTS ${WORKDIR}/ran)
      set(ran "; the program ran")
    endif()
    message(FATAL_ERROR "${description}: exit ${rc}${ran}, printed\n${out}${err}\n"
                        "expected exit 2 and one line matching ^${expected}$")
  endif()
endfunction()

refused("an unknown backend"
  "tally run: --backend: no backend named \"nosuch\" \\(simgpu or driver\\)"
  ${TALLY} run --backend nosuch)
refused("an unknown backend from the environment"
  "tally run: TALLY_BACKEND: no backend named \"nosuch\" \\(simgpu or driver\\)"
  ${CMAKE_COMMAND} -E env TALLY_BACKEND=nosuch ${TALLY} run)
refused("a missing profile"
  "tally run: --profile: profile bad\\.ini: cannot read the file: No such file or directory[^\n]*"
  ${TALLY} run --profile bad.ini)
refused("a profile the library's parser refuses"
  "tally run: --profile: profile ${WORKDIR}/invalid\\.ini, line 1: \"nosuchkey\"[^\n]*"
  ${TALLY} run --profile ${WORKDIR}/invalid.ini)
refused("a device as the profile"
  "tally run: --profile: profile /dev/null: [^\n]*not a regular file[^\n]*"
  ${TALLY} run --profile /dev/null)
refused("an interval without a unit"
  "tally run: -s: \"1x\" is not an interval like 100us, 1ms, 250000ns or 2s"
  ${TALLY} run -s 1x)
refused("an interval of no time" "tally run: -s: \"0ms\" is no time" ${TALLY} run -s 0ms)
refused("an unknown metric set"
  "tally run: --set: no metric set named \"NoSuch\" \\(the simgpu backend's: RenderBasic, [^\n]*PipelineStats\\)"
  ${TALLY} run -s 1ms --set NoSuch)
refused("a metric set without sampling"
  "tally run: --set: only with -s INTERVAL, which samples" ${TALLY} run --set PipelineStats)
refused("a misspelt counter"
  "tally run: -c: no counter named \"IaVertice\" \\(did you mean IaVertices\\?\\)"
  ${TALLY} run -c GpuTime,IaVertice)
refused("a counter name far from any"
  "tally run: -c: no counter named \"Nothing\" \\(`tally list` shows them\\)"
  ${TALLY} run --counters Nothing)
refused("a counter the driver backend cannot measure"
  "tally run: -c: RasterizedPixels cannot be measured by the driver backend; it measures: GpuTime, [^\n]*IaVertices[^\n]*"
  ${TALLY} run --backend driver -c RasterizedPixels)
refused("a counter list that names nothing"
  "tally run: -c: names no counter [^\n]*" ${TALLY} run -c ,)
refused("a control character is escaped, never written"
  "tally run: -c: no counter named \"\\\\x1b\\[2J\" [^\n]*" ${TALLY} run -c "${escape}[2J")
refused("a control character from the environment is escaped, never written"
  "tally run: TALLY_BACKEND: no backend named \"\\\\x1bcx\\\\x07\" [^\n]*"
  ${CMAKE_COMMAND} -E env "TALLY_BACKEND=${escape}cx${bell}" ${TALLY} run)
refused("an unknown clock"
  "tally run: --clock: no clock mode \"foo\" \\(realtime or virtual\\)" ${TALLY} run --clock foo)
refused("an unknown granularity"
  "tally run: --granularity: no granularity \"foo\" \\(command, render-pass or command-buffer\\)"
  ${TALLY} run --granularity foo)

# What is accepted reaches the program checked, each counter once.
execute_process(COMMAND ${TALLY} run -q -c "GpuTime, GpuTime,all" --backend driver --clock VIRTUAL
                        -- sh -c "echo \"$TALLY_COUNTERS $TALLY_BACKEND\""
                WORKING_DIRECTORY ${WORKDIR} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "GpuTime,all driver\n")
  message(FATAL_ERROR "good options: exit ${rc}, the program saw ${out}")
endif()
# An empty variable is unset, as the library reads it.
execute_process(COMMAND ${CMAKE_COMMAND} -E env TALLY_COUNTERS= TALLY_BACKEND= ${TALLY} run -q
                        -- sh -c "echo \"[$TALLY_COUNTERS]\""
                WORKING_DIRECTORY ${WORKDIR} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "[]\n")
  message(FATAL_ERROR "empty variables: exit ${rc}, the program saw ${out}")
endif()
