# Checked against real TorchRec, over committed recordings,
# with python3 (standard library only; no torch):
#  - torchrec_graph: the graph dlrmc synthesizes in the torchrec style for
#    each recorded TorchRec training step (tests/fixtures/torchrec: DLRM
#    and DLRM-DCNv2, table-wise at world 1 and 2, the other sharding
#    types at world 4 in two hosts and 3 in one; gloo, the CPU) has the
#    recording's top-level op sequence (the pipeline stages), the same key
#    ops in each stage (collectives and their sizes, FBGEMM ops, GEMMs and their
#    shapes, loss, optimizer) and the same GEMMs; what cannot match on the
#    CPU is listed in check_graph.py;
#  - planner_torchrec: dlrmc's restatement of TorchRec's shard estimator
#    (runtime/plan/torchrec_estimate.c) against the per-shard Perf and Storage
#    TorchRec 1.9.2's own planner computed on 60 generated configs, with
#    TorchRec's chosen plan pinned; then dlrmc's `plan: auto` with
#    `sharding.objective: torchrec` against TorchRec's plan under
#    TorchRec's cost (never worse, or the test fails), and with the
#    default objective for information (tests/fixtures/planner/README.md).
find_program(DC_PYTHON3_TORCHREC python3)
if(DC_PYTHON3_TORCHREC)
  foreach(_t torchrec_graph planner_torchrec)
    if(_t STREQUAL "torchrec_graph")
      set(_dir ${PROJECT_SOURCE_DIR}/tests/fixtures/torchrec)
      set(_script check_graph.py)
    else()
      set(_dir ${PROJECT_SOURCE_DIR}/tests/fixtures/planner)
      set(_script check_planner.py)
    endif()
    add_test(NAME ${_t}
      COMMAND ${DC_PYTHON3_TORCHREC} ${_dir}/${_script} $<TARGET_FILE:dlrmc>
              ${_dir} ${CMAKE_CURRENT_BINARY_DIR}/${_t})
  endforeach()
  # the same against 36 configs TorchRec planned with its UVM kernels
  # allowed (tests/fixtures/planner/README.md, "UVM kernels")
  add_test(NAME planner_torchrec_uvm
    COMMAND ${DC_PYTHON3_TORCHREC}
            ${PROJECT_SOURCE_DIR}/tests/fixtures/planner/check_planner.py
            $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR}/tests/fixtures/planner/uvm
            ${CMAKE_CURRENT_BINARY_DIR}/planner_torchrec_uvm --uvm)
  # and against 24 configs whose pooling factors are not binary fractions
  # (0.3, 1.7 ...; "Fractional pooling") and 16 configs of several hosts
  # where one or two tables opt in to grid_shard ("Grid shards") or to
  # table_column_wise ("Table-column-wise shards";
  # tests/fixtures/planner/README.md)
  foreach(_set fractional grid twcw)
    add_test(NAME planner_torchrec_${_set}
      COMMAND ${DC_PYTHON3_TORCHREC}
              ${PROJECT_SOURCE_DIR}/tests/fixtures/planner/check_planner.py
              $<TARGET_FILE:dlrmc>
              ${PROJECT_SOURCE_DIR}/tests/fixtures/planner/${_set}
              ${CMAKE_CURRENT_BINARY_DIR}/planner_torchrec_${_set})
  endforeach()
endif()

# planner_torchrec_no_plan: where TorchRec's planner finds no plan (storage),
# `plan: auto` under `objective: torchrec` still prices dlrmc's default plan
# (fits = false) and says so on stderr, as TorchRec's planner fails there.
add_test(NAME planner_torchrec_no_plan
  COMMAND ${CMAKE_COMMAND} -DDLRMC=$<TARGET_FILE:dlrmc>
    -DSTUDY=${PROJECT_SOURCE_DIR}/tests/fixtures/planner/no_plan_torchrec.yaml
    -P ${PROJECT_SOURCE_DIR}/tests/fixtures/planner/check_no_plan.cmake)
set_tests_properties(planner_torchrec_no_plan PROPERTIES LABELS unit)
