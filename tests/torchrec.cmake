# The torchrec execution style against real TorchRec (issue #15): the
# graph dlrmc synthesizes for each recorded TorchRec training step
# (tests/fixtures/torchrec: DLRM and DLRM-DCNv2, world 1 and 2, gloo, the
# CPU) has the recording's top-level op sequence (the pipeline stages),
# the same key ops in each stage (collectives and their sizes, FBGEMM
# ops, GEMMs and their shapes, loss, optimizer) and the same GEMMs. What
# cannot match on the CPU is listed in check_graph.py. Needs python3
# (standard library only; no torch).
find_program(DC_PYTHON3_TORCHREC python3)
if(DC_PYTHON3_TORCHREC)
  add_test(NAME torchrec_graph
    COMMAND ${DC_PYTHON3_TORCHREC}
            ${PROJECT_SOURCE_DIR}/tests/fixtures/torchrec/check_graph.py
            $<TARGET_FILE:dlrmc>
            ${PROJECT_SOURCE_DIR}/tests/fixtures/torchrec
            ${CMAKE_CURRENT_BINARY_DIR}/torchrec_graph)
endif()
