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
