# Fails when a source of libtally's parts, a backend or a front door reaches
# across a folder boundary with a relative include ("../engine.h"), which the
# per-part include directories would not otherwise stop.
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/engine/*.[ch] ${SOURCE_DIR}/backends/*.[ch] ${SOURCE_DIR}/writers/*.[ch]
     ${SOURCE_DIR}/md/*.[ch] ${SOURCE_DIR}/md/*.cpp ${SOURCE_DIR}/session/*.[ch]
     ${SOURCE_DIR}/layer/*.[ch] ${SOURCE_DIR}/gl_shim/*.[ch] ${SOURCE_DIR}/egl_shim/*.[ch]
     ${SOURCE_DIR}/cl_shim/*.[ch] ${SOURCE_DIR}/preload/*.[ch])
set(crossing)
foreach(source ${sources})
  file(STRINGS ${SOURCE_DIR}/${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]+\"[^\"]*\\.\\./")
  foreach(line ${lines})
    list(APPEND crossing "${source}: ${line}")
  endforeach()
endforeach()
if(crossing)
  list(JOIN crossing "\n  " text)
  message(FATAL_ERROR "includes across folder boundaries:\n  ${text}")
endif()
list(LENGTH sources count)
message(STATUS "${count} sources keep to their folders' include boundaries")
