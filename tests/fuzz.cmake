# tests/fuzz/: the libFuzzer targets over every input reader: the study
# front end (fuzz_study), GPU, overhead and model YAML, the CSV readers, study
# to result (below),
# and the trace readers (fuzz_trace). The replay
# driver runs the same entry point over the corpus and tests/bad/ under any
# compiler (ctest: fuzz_replay); the libFuzzer binary `fuzz_study` is built
# only with -DDC_FUZZ=ON and clang:
#   cmake -B build-fuzz -DCMAKE_C_COMPILER=clang -DDC_FUZZ=ON
#   build-fuzz/tests/fuzz_study -max_total_time=600 tests/fuzz/corpus
set(_dc_fuzz_dir ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
add_executable(fuzz_study_replay ${_dc_fuzz_dir}/fuzz_study.c
                                 ${_dc_fuzz_dir}/corpus_replay.c)
target_link_libraries(fuzz_study_replay PRIVATE dc_compiler dc_support
                      dc_warnings)
add_test(NAME fuzz_replay
  COMMAND fuzz_study_replay ${_dc_fuzz_dir}/corpus ${CMAKE_CURRENT_SOURCE_DIR}/bad)
set_tests_properties(fuzz_replay PROPERTIES LABELS fuzz)
# The trace readers: fuzz_trace over trace_corpus/ (small Kineto traces,
# current and 2021 categories, and broken ones) and the synthetic fixtures.
add_executable(fuzz_trace_replay ${_dc_fuzz_dir}/fuzz_trace.c
                                 ${_dc_fuzz_dir}/corpus_replay.c)
target_link_libraries(fuzz_trace_replay PRIVATE dc_trace dc_runtime
                      dc_support dc_warnings)
add_test(NAME fuzz_trace_replay
  COMMAND fuzz_trace_replay ${_dc_fuzz_dir}/trace_corpus
          ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/synthetic_kineto.json
          ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/synthetic_legacy_kineto.json
          ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/synthetic_kineto.json.gz)
set_tests_properties(fuzz_trace_replay PROPERTIES LABELS fuzz)
# The execution-trace reader: fuzz_et over et_corpus/ (the hand-written
# mapping traces and broken ones) and the repo's recorded ETs.
add_executable(fuzz_et_replay ${_dc_fuzz_dir}/fuzz_et.c
                              ${_dc_fuzz_dir}/corpus_replay.c)
target_link_libraries(fuzz_et_replay PRIVATE dc_trace dc_graphgen dc_runtime dc_support
                      dc_warnings)
add_test(NAME fuzz_et_replay
  COMMAND fuzz_et_replay ${_dc_fuzz_dir}/et_corpus
          ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/dcn_lowrank.et.json.gz
          ${PROJECT_SOURCE_DIR}/tests/fixtures/torchrec/dot_w2_r0.et.json.gz)
set_tests_properties(fuzz_et_replay PROPERTIES LABELS fuzz)

if(DC_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DC_FUZZ=ON needs clang (-DCMAKE_C_COMPILER=clang)")
  endif()
  # Coverage for the code under test; the fuzzer's main comes from libFuzzer.
  target_compile_options(dc_compiler PRIVATE -fsanitize=fuzzer-no-link,${DC_SANITIZERS} -fno-sanitize-recover=all)
  target_compile_options(dc_support PRIVATE -fsanitize=fuzzer-no-link,${DC_SANITIZERS} -fno-sanitize-recover=all)
  add_executable(fuzz_study ${_dc_fuzz_dir}/fuzz_study.c)
  target_compile_options(fuzz_study PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS} -fno-sanitize-recover=all)
  target_link_options(fuzz_study PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS})
  target_link_libraries(fuzz_study PRIVATE dc_compiler dc_support dc_warnings)
  foreach(_lib dc_trace dc_runtime dc_kernels)
    target_compile_options(${_lib} PRIVATE -fsanitize=fuzzer-no-link,${DC_SANITIZERS} -fno-sanitize-recover=all)
  endforeach()
  add_executable(fuzz_trace ${_dc_fuzz_dir}/fuzz_trace.c)
  target_compile_options(fuzz_trace PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS} -fno-sanitize-recover=all)
  target_link_options(fuzz_trace PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS})
  target_link_libraries(fuzz_trace PRIVATE dc_trace dc_runtime dc_support
                        dc_warnings)
  add_executable(fuzz_et ${_dc_fuzz_dir}/fuzz_et.c)
  target_compile_options(fuzz_et PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS} -fno-sanitize-recover=all)
  target_link_options(fuzz_et PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS})
  target_link_libraries(fuzz_et PRIVATE dc_trace dc_graphgen dc_runtime dc_support
                        dc_warnings)
endif()

# The other input readers: GPU, overhead-profile and
# fitted-model YAML, the `fit` and `kernel --csv` CSV readers, the results
# table `dlrmc report` reads, and the study-to-result pipeline. Each has a replay test over its corpus (and
# the repo's own files of its kind) and, with DC_FUZZ=ON, a libFuzzer
# binary; tests/fuzz/campaign.sh fuzzes them all.
function(dc_fuzz_target name)
  cmake_parse_arguments(F "" "" "LIBS;SEEDS" ${ARGN})
  add_executable(${name}_replay ${_dc_fuzz_dir}/${name}.c
                                ${_dc_fuzz_dir}/corpus_replay.c)
  target_link_libraries(${name}_replay PRIVATE ${F_LIBS} dc_warnings)
  add_test(NAME ${name}_replay COMMAND ${name}_replay ${F_SEEDS})
  set_tests_properties(${name}_replay PROPERTIES LABELS fuzz)
  if(DC_FUZZ)
    add_executable(${name} ${_dc_fuzz_dir}/${name}.c)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS} -fno-sanitize-recover=all)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,${DC_SANITIZERS})
    target_link_libraries(${name} PRIVATE ${F_LIBS} dc_warnings)
  endif()
endfunction()
dc_fuzz_target(fuzz_gpu LIBS dc_kernels dc_support
  SEEDS ${_dc_fuzz_dir}/gpu_corpus ${PROJECT_SOURCE_DIR}/spec/gpus)
dc_fuzz_target(fuzz_overheads LIBS dc_runtime dc_kernels dc_support
  SEEDS ${_dc_fuzz_dir}/overheads_corpus ${PROJECT_SOURCE_DIR}/spec/overheads)
dc_fuzz_target(fuzz_model LIBS dc_kernels dc_support
  SEEDS ${_dc_fuzz_dir}/model_corpus ${PROJECT_SOURCE_DIR}/spec/kernels)
dc_fuzz_target(fuzz_csv LIBS dc_kernels dc_support
  SEEDS ${_dc_fuzz_dir}/csv_corpus ${PROJECT_SOURCE_DIR}/tests/bad_cli
)
dc_fuzz_target(fuzz_report LIBS dc_report dc_runtime dc_graphgen dc_kernels dc_support
  SEEDS ${_dc_fuzz_dir}/report_corpus ${PROJECT_SOURCE_DIR}/tests/golden/paper-configs.jsonl
        ${PROJECT_SOURCE_DIR}/tests/golden/gpu-generations.csv)
dc_fuzz_target(fuzz_result LIBS dc_runtime dc_graphgen dc_compiler dc_kernels dc_support
  SEEDS ${_dc_fuzz_dir}/result_corpus ${_dc_fuzz_dir}/corpus)
if(DC_FUZZ)
  foreach(_lib dc_graphgen dc_report)
    target_compile_options(${_lib} PRIVATE -fsanitize=fuzzer-no-link,${DC_SANITIZERS} -fno-sanitize-recover=all)
  endforeach()
endif()
