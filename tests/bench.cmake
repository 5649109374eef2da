# tests/bench/: front-end benchmarks, built but not registered with ctest
# (timings are reported, not asserted). Run: build/tests/bench_sweep
add_executable(bench_sweep ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_sweep.c)
target_link_libraries(bench_sweep PRIVATE dc_compiler dc_support dc_warnings)
