# graphgen end-to-end suites (included by tests/CMakeLists.txt):
#  - golden text graphs of the paper's three configurations (and DLRM_DDP
#    on 2 GPUs), built from hand-made points by golden_graph and compared
#    byte for byte with tests/golden/graph/*.txt, and the execution trace
#    of rank 0 of a tiny 2-GPU model (tiny_2gpu_et.json). Regenerate them
#    with
#      cmake -DDC_REGEN_GOLDEN=ON ... && ctest -R graph_golden
#    or  DC_REGEN_GOLDEN=1 ctest -R graph_golden
#  - graph_studies_<study>: `dlrmc graph` on each study in studies/ (first
#    and last point), in the three formats; the ET must parse as JSON
#    (python3) and the DOT must parse (gc) and, up to 100 KiB, render
#    (dot), each checked when the tool is installed;
#  - bench_graph: the graph-building benchmark, a build target only (run
#    it by hand; its figure is in spec/speed.md), never a timed test.
option(DC_REGEN_GOLDEN "Rewrite golden files instead of comparing them" OFF)

set(_dc_graph_dir ${PROJECT_SOURCE_DIR}/tests/golden/graph)

add_executable(golden_graph ${_dc_graph_dir}/golden_graph.c)
target_link_libraries(golden_graph PRIVATE dc_graphgen dc_support dc_warnings)

add_executable(bench_graph ${PROJECT_SOURCE_DIR}/tests/bench/bench_graph.c)
target_link_libraries(bench_graph PRIVATE dc_graphgen dc_support dc_warnings)

foreach(_cfg DLRM_default DLRM_MLPerf DLRM_DDP DLRM_DDP:2 tiny:2:et)
  string(REPLACE ":" ";" _parts ${_cfg})
  list(GET _parts 0 _name)
  list(LENGTH _parts _n)
  set(_gpus 1)
  set(_file ${_name})
  set(_fmt "")
  set(_ext txt)
  if(_n GREATER 1)
    list(GET _parts 1 _gpus)
    set(_file ${_name}_${_gpus}gpu)
  endif()
  if(_n GREATER 2) # the ET of rank 0 (export_et.c), a golden of its own
    list(GET _parts 2 _fmt)
    set(_file ${_file}_${_fmt})
    set(_ext json)
  endif()
  add_test(NAME graph_golden_${_file}
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:golden_graph>
            -DNAME=${_name} -DGPUS=${_gpus} -DFORMAT=${_fmt}
            -DGOLDEN=${_dc_graph_dir}/${_file}.${_ext}
            -DACTUAL=${CMAKE_CURRENT_BINARY_DIR}/${_file}.actual.${_ext}
            -DREGEN=${DC_REGEN_GOLDEN}
            -P ${_dc_graph_dir}/check_golden.cmake)
endforeach()

file(GLOB _dc_graph_studies CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/studies/*.yaml)
foreach(_s ${_dc_graph_studies})
  get_filename_component(_b ${_s} NAME_WE)
  add_test(NAME graph_studies_${_b}
    COMMAND ${CMAKE_COMMAND} -DDLRMC=$<TARGET_FILE:dlrmc> -DSTUDY=${_s}
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/graph_studies/${_b}
            -P ${_dc_graph_dir}/check_studies.cmake)
endforeach()

# DCNv2: the GEMMs of our graph against a real PyTorch execution trace of
# the same model (tests/fixtures/traces/README-dcn.md: torch 2.14 +
# TorchRec's LowRankCrossNet / CrossNet, recorded on the CPU).
find_program(DC_PYTHON3_ET python3)
if(DC_PYTHON3_ET)
  foreach(_v lowrank fullrank)
    add_test(NAME graph_et_gemms_dcn_${_v}
      COMMAND ${CMAKE_COMMAND} -DDLRMC=$<TARGET_FILE:dlrmc>
              -DPYTHON=${DC_PYTHON3_ET}
              -DSTUDY=${PROJECT_SOURCE_DIR}/tests/fixtures/traces/dcn_${_v}.yaml
              -DTRACE=${PROJECT_SOURCE_DIR}/tests/fixtures/traces/dcn_${_v}.et.json.gz
              -DTOOL=${PROJECT_SOURCE_DIR}/tests/fixtures/traces/et_gemms.py
              -DOUT=${CMAKE_CURRENT_BINARY_DIR}/dcn_${_v}.ours.et.json
              -P ${_dc_graph_dir}/check_et_gemms.cmake)
  endforeach()
endif()

# The ET of studies/paper-configs.yaml point 0 through the parsers of the
# tools that read real ETs: PARAM's et_replay and Chakra's PyTorch
# converter (tests/fixtures/traces/et_consumers.py says how to install
# them: DC_PARAM_DIR, DC_ET_PYTHON). Skipped, saying why, where they are
# not installed.
if(DC_PYTHON3_ET)
  foreach(_tool param chakra)
    add_test(NAME et_consumer_${_tool}
      COMMAND ${DC_PYTHON3_ET}
              ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/et_consumers.py
              ${_tool} ${CMAKE_CURRENT_BINARY_DIR}/et_consumer_${_tool}.json
              $<TARGET_FILE:dlrmc>
              ${PROJECT_SOURCE_DIR}/studies/paper-configs.yaml)
    set_tests_properties(et_consumer_${_tool} PROPERTIES SKIP_RETURN_CODE 77)
    # a recorded trace (2-rank TorchRec step) imported and exported again
    add_test(NAME et_consumer_${_tool}_imported
      COMMAND ${DC_PYTHON3_ET}
              ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/et_consumers.py
              ${_tool}
              ${CMAKE_CURRENT_BINARY_DIR}/et_consumer_${_tool}_imported.json
              $<TARGET_FILE:dlrmc>
              ${PROJECT_SOURCE_DIR}/tests/fixtures/torchrec/dot_w2_r0.et.json.gz)
    set_tests_properties(et_consumer_${_tool}_imported
                         PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
endif()

# The execution trace with device nodes (--with-device, spec/astra-sim.md)
# of an 8×H100 DCNv2 TorchRec point (studies/dcnv2-mlperf.yaml point 10:
# H100, fp32, torchrec; all four collective types): its structure, its
# kernels against dlrmc's own timeline and the --from-et round trip
# (standard library), then through Chakra's converter and jsonizer
# (DC_ET_PYTHON, as the consumer tests above; skipped, saying why, where
# Chakra is not installed).
if(DC_PYTHON3_ET)
  foreach(_mode structure chakra)
    add_test(NAME et_device_${_mode}
      COMMAND ${DC_PYTHON3_ET}
              ${PROJECT_SOURCE_DIR}/tests/fixtures/traces/et_device.py
              ${_mode} $<TARGET_FILE:dlrmc>
              ${PROJECT_SOURCE_DIR}/studies/dcnv2-mlperf.yaml 10 H100
              ${CMAKE_CURRENT_BINARY_DIR}/et_device_${_mode})
    set_tests_properties(et_device_${_mode} PROPERTIES SKIP_RETURN_CODE 77)
  endforeach()
endif()
