# Trace import: end-to-end tests of `dlrmc overheads extract` and `dlrmc
# trace stats` on every real trace in tests/data/traces, the test that a profile
# extracted from a trace drives `dlrmc run`, and the benchmark target
# `bench_trace` (a generated 200 MB trace; time and peak RSS from
# /usr/bin/time -v). Unit tests are tests/unit/test_runtime_trace*.c.
set(DC_TRACE_DATA ${PROJECT_SOURCE_DIR}/tests/data)

add_test(NAME trace_real_extract
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/real_traces.sh
                 $<TARGET_FILE:dlrmc> ${DC_TRACE_DATA} extract)
add_test(NAME trace_real_stats
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/real_traces.sh
                 $<TARGET_FILE:dlrmc> ${DC_TRACE_DATA} stats)
add_test(NAME trace_profile_run
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/profile_run.sh
                 $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR})
set_tests_properties(trace_real_extract trace_real_stats trace_profile_run
                     PROPERTIES SKIP_RETURN_CODE 77)

# cmake --build BUILD --target bench_trace
add_executable(dc_trace_gen EXCLUDE_FROM_ALL
               ${CMAKE_CURRENT_SOURCE_DIR}/trace/gen_trace.c)
set(DC_TRACE_BENCH_FILE ${CMAKE_BINARY_DIR}/bench_trace_200mb.json)
add_custom_target(bench_trace
  COMMAND $<TARGET_FILE:dc_trace_gen> ${DC_TRACE_BENCH_FILE} 200
  COMMAND ls -l ${DC_TRACE_BENCH_FILE}
  COMMAND /usr/bin/time -v $<TARGET_FILE:dlrmc> overheads extract
          ${DC_TRACE_BENCH_FILE} -o ${CMAKE_BINARY_DIR}/bench_trace.yaml
  COMMAND /usr/bin/time -v $<TARGET_FILE:dlrmc> trace stats
          ${DC_TRACE_BENCH_FILE} -o ${CMAKE_BINARY_DIR}/bench_trace.md
  COMMAND ${CMAKE_COMMAND} -E rm -f ${DC_TRACE_BENCH_FILE}
  DEPENDS dc_trace_gen dlrmc
  USES_TERMINAL
  COMMENT "Trace benchmark: a generated 200 MB Kineto trace")

# `dlrmc trace kernels`: the hand-written fixture's rows, and the real A100
# trace's 1,776 GEMM rows (tests/data/traces).
add_test(NAME trace_kernels
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/trace_kernels.sh
                 $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR} ${DC_TRACE_DATA})
set_tests_properties(trace_kernels PROPERTIES SKIP_RETURN_CODE 77)

# `overheads extract --check` on the repo's traces with iterations: the
# host time per step each trace's own profile gives back (10 %).
add_test(NAME trace_host_check
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/host_check.sh
                 $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR})
set_tests_properties(trace_host_check PROPERTIES LABELS unit)

# Execution-trace import and `dlrmc replay`: the op mapping on two
# hand-written traces, the export -> import -> export round trip of every
# single-GPU study, replay on the repo's recorded CPU pairs, several ranks
# at once, hostile inputs, and the GPU pairs in tests/data/traces.
foreach(_mode mapping roundtrip fixtures ranks hostile shared)
  add_test(NAME replay_${_mode}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/trace/replay.sh
                   $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR} ${DC_TRACE_DATA}
                   ${_mode})
  set_tests_properties(replay_${_mode} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()

# `dlrmc calibrate` on a recorded H200 step, then a study on its models
# (spec/calibrate.md).
add_test(NAME calibrate
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/calibrate/calibrate.sh
                 $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR})
set_tests_properties(calibrate PROPERTIES LABELS unit)
