# Runs one study and compares its output with the golden file byte for
# byte, or rewrites the golden when REGEN is ON (or the environment has
# DC_REGEN_GOLDEN=1). Arguments: DLRMC STUDY GOLDEN OUT JOBS [FORMAT] REGEN.
if(NOT FORMAT)
  set(FORMAT csv)
endif()
file(REMOVE ${OUT})
execute_process(
  COMMAND ${DLRMC} run ${STUDY} -o ${OUT} --jobs ${JOBS} --format ${FORMAT}
          ${EXTRA}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlrmc run ${STUDY} failed (${rc}):\n${err}")
endif()
if(REGEN OR "$ENV{DC_REGEN_GOLDEN}" STREQUAL "1")
  configure_file(${OUT} ${GOLDEN} COPYONLY)
  message(STATUS "rewrote ${GOLDEN}")
  return()
endif()
if(NOT EXISTS ${GOLDEN})
  message(FATAL_ERROR "no golden ${GOLDEN}; run with DC_REGEN_GOLDEN=1")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${GOLDEN}
                RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  file(READ ${OUT} got)
  message(FATAL_ERROR "${OUT} differs from ${GOLDEN} (jobs ${JOBS}); "
          "got:\n${got}\nIf the change is intended, regenerate with "
          "DC_REGEN_GOLDEN=1 ctest -R golden_")
endif()
