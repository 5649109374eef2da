# `dlrmc graph STUDY --format et` must run the same GEMMs (op, M, N, K,
# batch — a multiset) as a real PyTorch execution trace of that model:
# tests/fixtures/traces/et_gemms.py --compare TRACE OURS. Variables: DLRMC,
# PYTHON, STUDY, TRACE, TOOL, OUT.
execute_process(COMMAND ${DLRMC} graph ${STUDY} --format et
                OUTPUT_FILE ${OUT} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dlrmc graph ${STUDY} --format et failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${PYTHON} ${TOOL} --compare ${TRACE} ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the GEMMs of ${STUDY} differ from ${TRACE}")
endif()
