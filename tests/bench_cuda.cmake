# dlrmc-bench end to end (kernels/bench/). Registered only when the CUDA
# binary is built (DC_CUDA). The CLI tests need no GPU: CUDA's runtime
# loads the driver lazily, so --help, usage errors and --list run on any
# machine. The smoke test runs a tiny sweep of every kind on a GPU and is
# skipped (exit 77) where `dlrmc-bench devices` finds none.
if(NOT TARGET dlrmc-bench)
  return()
endif()

set(_dc_bench $<TARGET_FILE:dlrmc-bench>)
# ASan reserves the address range CUDA's driver maps; let it share.
set(_dc_bench_env "ASAN_OPTIONS=protect_shadow_gap=0")

add_test(NAME bench_cli_help COMMAND ${_dc_bench} --help)
set_tests_properties(bench_cli_help PROPERTIES
  PASS_REGULAR_EXPRESSION "usage: dlrmc-bench KIND \\[options\\]")

add_test(NAME bench_cli_help_kind COMMAND ${_dc_bench} help tril)
set_tests_properties(bench_cli_help_kind PROPERTIES
  PASS_REGULAR_EXPRESSION "CSV columns: kind,batch,m,n,diag,dtype,time_us,mean_us")

# A usage error exits 2 and names the fix (checked in the script: a
# PASS_REGULAR_EXPRESSION would make ctest ignore the exit status).
add_test(NAME bench_cli_usage_error COMMAND sh -c
  "out=$(\"$1\" gemm --bacth 1 2>&1); rc=$?; echo \"$out\"; test $rc -eq 2 && echo \"$out\" | grep -q \"did you mean '--batch'\""
  sh ${_dc_bench})

add_test(NAME bench_cli_list COMMAND ${_dc_bench} tril --list --batch 512
  --n 4 --diag 0)
set_tests_properties(bench_cli_list PROPERTIES
  PASS_REGULAR_EXPRESSION
  "kind,batch,m,n,diag,dtype,time_us,mean_us\ntril_fwd,512,4,4,0,fp32,,\ntril_bwd,512,4,4,0,fp32,,\n")

add_test(NAME bench_gpu_smoke COMMAND sh
  ${PROJECT_SOURCE_DIR}/kernels/bench/smoke_test.sh ${_dc_bench}
  ${CMAKE_CURRENT_BINARY_DIR}/bench_smoke)
set_tests_properties(bench_gpu_smoke bench_cli_list PROPERTIES
  ENVIRONMENT "${_dc_bench_env}" SKIP_RETURN_CODE 77 TIMEOUT 600)
