# `tally run` as a user sees it: the environment the front doors read, the
# program's exit status passed through, and usage errors. Run with
# -DTALLY=<tally binary> -DWORKDIR=<scratch dir>.
function(expect_output description expected)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORKDIR}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${expected}")
    message(FATAL_ERROR "${description}: exit ${rc}, printed\n${out}${err}\nexpected ${expected}")
  endif()
endfunction()

function(expect_status description expected)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORKDIR}
                  OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "${expected}")
    message(FATAL_ERROR "${description}: exit ${rc}, expected ${expected}\n${err}")
  endif()
endfunction()

file(MAKE_DIRECTORY ${WORKDIR})
get_filename_component(prefix ${TALLY} DIRECTORY)
get_filename_component(prefix ${prefix} DIRECTORY)

# Each process gets paths of its own: %p, its process id, before the extension.
expect_output("report paths are made absolute, one per process"
  "^${WORKDIR}/r\\.%p\\.csv ${WORKDIR}/t\\.%p\\.json all virtual\n$"
  ${TALLY} run -q -o r.csv -t t.json -c all --clock virtual --
  sh -c "echo \"$TALLY_OUTPUT $TALLY_TRACE $TALLY_COUNTERS $TALLY_CLOCK\"")
expect_output("sampling options reach the program"
  "^1ms PipelineStats ${WORKDIR}/s\\.%p\\.csv\n$"
  ${TALLY} run -q --sample 1ms --set PipelineStats --sample-output s.csv --
  sh -c "echo \"$TALLY_SAMPLE $TALLY_SAMPLE_SET $TALLY_SAMPLE_OUTPUT\"")
expect_output("without --sample nothing is sampled"
  "^unset\n$" ${TALLY} run -q -- sh -c "echo \"\${TALLY_SAMPLE-unset}\"")

# Each front door that was built is activated, and only those: the GL and
# EGL shims preloaded, the OpenCL shim as the ICD loader's layer, which also
# sees programs that call through their own dlopen handle.
foreach(shim gl egl cl)
  if(EXISTS ${prefix}/lib/libtally_${shim}.so)
    set(var LD_PRELOAD)
    if(shim STREQUAL "cl")
      set(var OPENCL_LAYERS)
    endif()
    expect_output("the ${shim} shim is in ${var}" "libtally_${shim}\\.so"
                  ${TALLY} run -q -- sh -c "echo \"$${var}\"")
    expect_output("--no-${shim} leaves the ${shim} shim out" "^[^\n]*\n$"
                  ${TALLY} run -q --no-${shim} -- sh -c "echo \"$${var}\" | grep -v libtally_${shim}.so || echo")
  endif()
endforeach()
if(EXISTS ${prefix}/lib/libtally_cl.so)
  expect_output("the OpenCL shim is not preloaded" "^[^\n]*\n$"
                ${TALLY} run -q -- sh -c "echo \"$LD_PRELOAD\" | grep -v libtally_cl.so || echo")
endif()
if(EXISTS ${prefix}/share/vulkan/explicit_layer.d)
  expect_output("the layer is enabled explicitly"
    "^VK_LAYER_TALLY_counters[^\n]* ${prefix}/share/vulkan/explicit_layer.d"
    ${TALLY} run -q -- sh -c "echo \"$VK_INSTANCE_LAYERS $VK_ADD_LAYER_PATH\"")
  expect_output("--implicit enables the implicit manifest"
    "^1 ${prefix}/share:"
    ${TALLY} run -q --implicit -- sh -c "echo \"$TALLY $XDG_DATA_DIRS\"")
endif()

if(EXISTS ${prefix}/lib/libigdmd.so.1)
  expect_output("libigdmd.so is found first on the library path" "^${prefix}/lib:"
                ${TALLY} run -q -- sh -c "echo \"$LD_LIBRARY_PATH:\"")
  expect_output("--no-md leaves it out" "^0\n$" ${TALLY} run -q --no-md --
                sh -c "echo \"x$LD_LIBRARY_PATH\" | grep -c \"${prefix}/lib\" || true")
endif()

expect_status("the program's exit status is tally's" 3 ${TALLY} run -q -- sh -c "exit 3")
expect_status("a program killed by a signal gives 128 + the signal" 137
              ${TALLY} run -q -- sh -c "kill -KILL $$")
expect_status("a program that cannot be run gives 127" 127 ${TALLY} run -q -- ./no-such-program)
expect_status("no program is a usage error" 2 ${TALLY} run -q)
expect_status("an unknown option is a usage error" 2 ${TALLY} run --no-such-option -- true)
expect_status("a bad clock is a usage error" 2 ${TALLY} run --clock sundial -- true)

# Saying where the report went, or that none was written.
execute_process(COMMAND ${TALLY} run -o nothing.csv -- true WORKING_DIRECTORY ${WORKDIR}
                ERROR_VARIABLE err)
if(NOT err MATCHES "no per-command report was written to ${WORKDIR}/nothing\\.csv")
  message(FATAL_ERROR "tally run did not say that no report was written:\n${err}")
endif()
# The shell writes the file a front door would: its path with %p its pid.
execute_process(COMMAND ${TALLY} run -o made.csv --
                        sh -c "echo header > \"$(echo \"$TALLY_OUTPUT\" | sed s/%p/$$/)\""
                WORKING_DIRECTORY ${WORKDIR} ERROR_VARIABLE err)
if(NOT err MATCHES "per-command report: ${WORKDIR}/made\\.csv \\(0 rows\\)"
   OR NOT EXISTS ${WORKDIR}/made.csv)
  message(FATAL_ERROR "tally run did not say where the report went:\n${err}")
endif()

# The habits of the ecosystem: -h and --help, and --version.
expect_output("tally -h prints the usage" "^usage: tally COMMAND" ${TALLY} -h)
expect_output("tally run -h prints its usage" "^usage: tally run" ${TALLY} run -h)
expect_output("tally --version prints the version" "^tally [0-9]+\\.[0-9]+\\.[0-9]+\n$"
              ${TALLY} --version)
expect_output("tally list --help prints its usage" "^usage: tally list" ${TALLY} list --help)
expect_output("tally list -h prints its usage" "^usage: tally list" ${TALLY} list -h)
# The driver backend lists what it can measure: its own counters, and no
# counter only simgpu models.
expect_output("tally list --backend driver lists what the driver measures"
  "\nIaVertices +Input assembly vertices +InputAssembler +vertices +uint64 +measured\n"
  ${TALLY} list --backend driver)
execute_process(COMMAND ${TALLY} list --backend driver OUTPUT_VARIABLE out)
if(out MATCHES "RasterizedPixels|L2CacheMisses")
  message(FATAL_ERROR "tally list --backend driver lists what the driver cannot measure:\n${out}")
endif()
expect_output("tally list --backend simgpu lists what simgpu models" "\nRasterizedPixels "
              ${TALLY} list --backend simgpu)
expect_status("tally list --backend of no backend is a usage error" 2
              ${TALLY} list --backend nosuch)

# With no file asked for, tally run asks each process for its count of
# commands at the end (engine/run_note.c); never with a file, nor with -q.
expect_output("with no file asked for, the processes say what they saw" "^1\n$"
              ${TALLY} run -- sh -c "echo \"\${TALLY_RUN_NOTE-unset}\"")
foreach(asked "-o;r.csv" "-t;t.json" "-s;1ms" "-q")
  expect_output("tally run ${asked} asks for no count" "^unset\n$"
                ${TALLY} run ${asked} -- sh -c "echo \"\${TALLY_RUN_NOTE-unset}\"")
endforeach()

# Samples that were not written are said in grammatical English.
execute_process(COMMAND ${TALLY} run -s 1ms --sample-output none.csv -- true
                WORKING_DIRECTORY ${WORKDIR} ERROR_VARIABLE err)
if(NOT err MATCHES "tally run: no sample file was written to ${WORKDIR}/none\\.csv")
  message(FATAL_ERROR "tally run did not say that no sample file was written:\n${err}")
endif()
