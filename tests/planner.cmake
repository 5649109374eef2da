# TorchRec's sharding planner, side by side (issue #15): dlrmc's
# restatement of TorchRec's shard estimator (runtime/torchrec.c) against
# the per-shard Perf and Storage TorchRec 1.9.2's own planner computed on
# 60 generated configs, with TorchRec's chosen plan pinned; then dlrmc's
# `plan: auto` with `sharding.objective: torchrec` against TorchRec's plan
# under TorchRec's cost (never worse, or the test fails), and with the
# default objective for information. The fixtures
# and every known difference: tests/fixtures/planner/README.md. Needs
# python3 (standard library only; no torch).
find_program(DC_PYTHON3_PLANNER python3)
if(DC_PYTHON3_PLANNER)
  add_test(NAME planner_torchrec
    COMMAND ${DC_PYTHON3_PLANNER}
            ${PROJECT_SOURCE_DIR}/tests/fixtures/planner/check_planner.py
            $<TARGET_FILE:dlrmc>
            ${PROJECT_SOURCE_DIR}/tests/fixtures/planner
            ${CMAKE_CURRENT_BINARY_DIR}/planner)
endif()
