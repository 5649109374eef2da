# dlrmc's collective prices against published nccl-tests bus bandwidths
# (tests/data/nccl-tests/: the rows, their sources, the 15 % rule) and the
# comparison table in spec/collectives.md.
find_program(DC_PYTHON3_NCCL python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(DC_PYTHON3_NCCL)
  add_test(NAME nccl_tests_busbw
    COMMAND ${DC_PYTHON3_NCCL}
            ${PROJECT_SOURCE_DIR}/tests/data/nccl-tests/check_busbw.py
            $<TARGET_FILE:dlrmc>
            ${PROJECT_SOURCE_DIR}/tests/data/nccl-tests/busbw.csv 0.15
            --spec ${PROJECT_SOURCE_DIR}/spec/collectives.md)
  set_tests_properties(nccl_tests_busbw PROPERTIES LABELS unit)
endif()

# `dlrmc kernel <collective> --explain` names the algorithm, protocol,
# domains and each level's bytes and time (kernels/coll.c).
add_test(NAME kernel_explain_collective
  COMMAND dlrmc kernel all_reduce bytes=32MB ranks=16 hosts=2 --gpu H100
          --explain)
set_tests_properties(kernel_explain_collective PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION
  "model nccl.*nvls_tree Simple over 2x8 \\(domains x GPUs\\): inside 32\\.000 MB at 274\\.5 GB/s = 116\\.576 us, across 4\\.000 MB at 43\\.2 GB/s")

# NCCL's LL ceiling (llMaxBws): a ring LL all-reduce across two H100 hosts
# moves its bus bytes at no more than 39 GB/s, though the links would
# carry ~90 (kernels/coll.c, spec/collectives.md).
add_test(NAME kernel_explain_ll_ceiling
  COMMAND dlrmc kernel all_reduce bytes=256K ranks=16 hosts=2 algo=ring
          --gpu H100 --explain)
set_tests_properties(kernel_explain_ll_ceiling PROPERTIES LABELS unit
  PASS_REGULAR_EXPRESSION
  "ring LL over 2x8 \\(domains x GPUs\\): inside 0\\.480 MB at 39\\.0 GB/s")
