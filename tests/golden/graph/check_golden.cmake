# Runs golden_graph NAME GPUS [FORMAT] and compares its output with GOLDEN byte for
# byte; with REGEN (or the environment variable DC_REGEN_GOLDEN=1) writes
# GOLDEN instead. On a difference the actual output is left in ACTUAL.
execute_process(COMMAND ${EXE} ${NAME} ${GPUS} ${FORMAT}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "golden_graph ${NAME} ${GPUS} failed (${rc}):\n${err}")
endif()
if(REGEN OR "$ENV{DC_REGEN_GOLDEN}" STREQUAL "1")
  file(WRITE ${GOLDEN} "${out}")
  message(STATUS "regenerated ${GOLDEN}")
  return()
endif()
if(NOT EXISTS ${GOLDEN})
  file(WRITE ${ACTUAL} "${out}")
  message(FATAL_ERROR "missing ${GOLDEN}; the output is in ${ACTUAL} "
                      "(regenerate with DC_REGEN_GOLDEN=1)")
endif()
file(READ ${GOLDEN} want)
if(NOT out STREQUAL want)
  file(WRITE ${ACTUAL} "${out}")
  message(FATAL_ERROR "graph of ${NAME} (${GPUS} GPU) differs from "
                      "${GOLDEN}:\n  diff ${GOLDEN} ${ACTUAL}\n"
                      "regenerate with DC_REGEN_GOLDEN=1 ctest -R graph_golden "
                      "if the change is intended")
endif()
