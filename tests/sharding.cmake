# Sharding outputs: the per-rank and per-shard tables of the
# sharding studies compared with their goldens byte for byte, with one
# thread and with three (rows must not depend on --jobs). Regenerate like
# the other goldens (DC_REGEN_GOLDEN=1 ctest -R golden_).
set(_dc_sh_dir ${PROJECT_SOURCE_DIR}/tests/golden/sharding)
set(_dc_sh_out ${CMAKE_CURRENT_BINARY_DIR}/golden-out/sharding)
file(MAKE_DIRECTORY ${_dc_sh_out})
foreach(study sharding-balance mlperf-8xa100 mlperf-16xh100)
  foreach(mode per-rank per-shard)
    foreach(jobs 1 3)
      set(test golden_${study}_${mode}_j${jobs})
      if(jobs EQUAL 1)
        set(regen ${DC_REGEN_GOLDEN})
      else()
        set(regen OFF)
      endif()
      add_test(NAME ${test}
        COMMAND ${CMAKE_COMMAND}
          -DDLRMC=$<TARGET_FILE:dlrmc>
          -DSTUDY=${PROJECT_SOURCE_DIR}/studies/${study}.yaml
          -DGOLDEN=${_dc_sh_dir}/${study}.${mode}.csv
          -DOUT=${_dc_sh_out}/${study}.${mode}-j${jobs}.csv
          -DJOBS=${jobs} -DEXTRA=--${mode} -DREGEN=${regen}
          -P ${PROJECT_SOURCE_DIR}/tests/golden/run_golden.cmake
        WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
      if(jobs EQUAL 3)
        set_tests_properties(${test} PROPERTIES
          DEPENDS golden_${study}_${mode}_j1)
      endif()
    endforeach()
  endforeach()
endforeach()
