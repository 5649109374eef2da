# tests/kernels.cmake — the kernel models' real-data validation (a ctest
# test on tests/data/deepbench) and the pricing-speed benchmark
# (built with everything, so it cannot go stale; run by hand, not a timed
# test: `B/tests/bench_kernels [iterations]`).
add_executable(validate_gemm_deepbench
               ${CMAKE_CURRENT_SOURCE_DIR}/validation/gemm_deepbench.c)
target_link_libraries(validate_gemm_deepbench PRIVATE dc_kernels dc_support
                      dc_warnings)
add_test(NAME validation_kernels_gemm_deepbench
         COMMAND validate_gemm_deepbench)
set_tests_properties(validation_kernels_gemm_deepbench PROPERTIES
  ENVIRONMENT "DC_SOURCE_DIR=${PROJECT_SOURCE_DIR};DC_TEST_DATA=${PROJECT_SOURCE_DIR}/tests/data"
  SKIP_RETURN_CODE 77)

# The analytic GEMM on the held-back GEMMs of the A100 recsys trace
# (tests/validation/trace_gemm_check.py on tests/data/traces).
find_program(DC_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(DC_PYTHON3)
  add_test(NAME validation_gemm_trace
    COMMAND ${DC_PYTHON3}
            ${CMAKE_CURRENT_SOURCE_DIR}/validation/trace_gemm_check.py
            $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR}/tests/data)
  set_tests_properties(validation_gemm_trace PROPERTIES SKIP_RETURN_CODE 77)
  # the split-K reduce and bias-epilogue kernels of the same trace, whose
  # medians spec/accuracy.md quotes for kernels/gemm.c's reduce model
  add_test(NAME validation_reduce_trace
    COMMAND ${DC_PYTHON3}
            ${CMAKE_CURRENT_SOURCE_DIR}/validation/trace_reduce_report.py
            --check ${PROJECT_SOURCE_DIR}/tests/data)
  set_tests_properties(validation_reduce_trace PROPERTIES LABELS e2e)
  # dlrmc against the GPUs it was measured on: recomputes each lent GPU's
  # tables of spec/accuracy.md (training steps, dlrmc-bench kernels) and
  # spec/ground-truth.md (stock-PyTorch kernel families, launch cost,
  # CUDA-graph steps) from the committed measurements
  # (tests/validation/<gpu>/, recorded by tests/validation/gpu/) and fails
  # when they differ. No GPU needed.
  foreach(_gpu H200 H100)
    string(TOLOWER ${_gpu} _dir)
    add_test(NAME validation_${_dir}
      COMMAND ${DC_PYTHON3}
              ${CMAKE_CURRENT_SOURCE_DIR}/validation/gpu/compare.py
              $<TARGET_FILE:dlrmc> ${CMAKE_CURRENT_SOURCE_DIR}/validation/${_dir}
              ${_gpu} --check ${PROJECT_SOURCE_DIR}/spec/accuracy.md)
    add_test(NAME validation_${_dir}_round2
      COMMAND ${DC_PYTHON3}
              ${CMAKE_CURRENT_SOURCE_DIR}/validation/gpu/round2.py
              $<TARGET_FILE:dlrmc>
              ${CMAKE_CURRENT_SOURCE_DIR}/validation/${_dir}/round2
              ${_gpu} --check ${PROJECT_SOURCE_DIR}/spec/ground-truth.md)
    set_tests_properties(validation_${_dir}_round2 PROPERTIES LABELS golden)
  endforeach()
endif()

add_executable(bench_kernels
               ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_kernels.c)
target_link_libraries(bench_kernels PRIVATE dc_kernels dc_support dc_warnings)
