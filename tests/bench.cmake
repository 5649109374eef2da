# tests/bench/: front-end benchmarks, built but not registered with ctest
# (timings are reported, not asserted). Run: build/tests/bench_frontend
add_executable(bench_frontend ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_frontend.c)
target_link_libraries(bench_frontend PRIVATE dc_compiler dc_support dc_warnings)
