# End-to-end golden tests (tests/golden/): every study in studies/ is run
# through `dlrmc run` and its output compared byte for byte with
# tests/golden/<study>.csv, once with one thread and once with three (the
# output must not depend on --jobs). Further checks: the metric invariants
# on a wide study, that an interrupted run leaves no output file, and that
# system.links changes the answer (cli_links).
#
# Regenerate the goldens after an intended change with
#   cmake -DDC_REGEN_GOLDEN=ON <build> && ctest -R golden_ ; then turn it off
# or, without reconfiguring:  DC_REGEN_GOLDEN=1 ctest -R golden_
option(DC_REGEN_GOLDEN "Rewrite tests/golden/*.csv instead of comparing" OFF)

file(GLOB DC_GOLDEN_STUDIES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/studies/*.yaml)
set(_dc_golden_dir ${PROJECT_SOURCE_DIR}/tests/golden)
set(_dc_golden_out ${CMAKE_CURRENT_BINARY_DIR}/golden-out)
file(MAKE_DIRECTORY ${_dc_golden_out})

foreach(study ${DC_GOLDEN_STUDIES})
  get_filename_component(name ${study} NAME_WE)
  foreach(jobs 1 3)
    set(test golden_${name}_j${jobs})
    # Only the single-thread run may regenerate; the other compares.
    if(jobs EQUAL 1)
      set(regen ${DC_REGEN_GOLDEN})
    else()
      set(regen OFF)
    endif()
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND}
        -DDLRMC=$<TARGET_FILE:dlrmc> -DSTUDY=${study}
        -DGOLDEN=${_dc_golden_dir}/${name}.csv
        -DOUT=${_dc_golden_out}/${name}-j${jobs}.csv
        -DJOBS=${jobs} -DREGEN=${regen}
        -P ${_dc_golden_dir}/run_golden.cmake
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    if(jobs EQUAL 3)
      # Compare against the golden only after it may have been rewritten.
      set_tests_properties(${test} PROPERTIES DEPENDS golden_${name}_j1)
    endif()
  endforeach()
endforeach()

# The same study in the three formats, compared with their goldens.
foreach(fmt md jsonl)
  add_test(NAME golden_paper-configs_${fmt}
    COMMAND ${CMAKE_COMMAND}
      -DDLRMC=$<TARGET_FILE:dlrmc> -DSTUDY=${PROJECT_SOURCE_DIR}/studies/paper-configs.yaml
      -DGOLDEN=${_dc_golden_dir}/paper-configs.${fmt}
      -DOUT=${_dc_golden_out}/paper-configs.${fmt} -DJOBS=2
      -DFORMAT=${fmt} -DREGEN=${DC_REGEN_GOLDEN}
      -P ${_dc_golden_dir}/run_golden.cmake
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endforeach()

# --format, then output.format, then -o's extension (the
# study's output.format was parsed and never used).
add_test(NAME golden_format_precedence
  COMMAND sh ${_dc_golden_dir}/check_format.sh $<TARGET_FILE:dlrmc>
          ${PROJECT_SOURCE_DIR}/studies/paper-configs.yaml ${_dc_golden_dir}
          ${_dc_golden_out}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

# Invariants on every metric of a wide study (all metrics, several models,
# GPUs, batch sizes, profiles and ranks).
add_test(NAME golden_invariants
  COMMAND sh ${_dc_golden_dir}/check_invariants.sh $<TARGET_FILE:dlrmc>
          ${_dc_golden_dir}/invariants.yaml ${_dc_golden_out}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})

# A run killed half-way leaves no output file (and, for SIGTERM, no
# temporary either); shards partition the points.
add_test(NAME golden_killed_run
  COMMAND sh ${_dc_golden_dir}/check_killed.sh $<TARGET_FILE:dlrmc>
          ${_dc_golden_dir}/invariants.yaml ${_dc_golden_out}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# system.links reaches `run` and `explain`: each key, given two values
# with -D, moves comm_ms (e2e_ms for pcie) the expected way; no golden.
add_test(NAME cli_links
  COMMAND sh ${_dc_golden_dir}/check_links.sh $<TARGET_FILE:dlrmc>
          ${_dc_golden_out}
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(golden_invariants golden_killed_run cli_links PROPERTIES
  ENVIRONMENT "DLRMC_NO_PROGRESS=1")

# `run` prices PRICED graphs (one received tensor per class of feature)
# unless it writes timelines (FULL graphs): the tables must be identical
# on every study and every sharding class, style and embedding kernel.
add_test(NAME graph_detail
  COMMAND sh ${_dc_golden_dir}/check_detail.sh $<TARGET_FILE:dlrmc>
          ${_dc_golden_dir}/detail.yaml ${_dc_golden_out}/detail
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(graph_detail PROPERTIES
  ENVIRONMENT "DLRMC_NO_PROGRESS=1")

# The Slurm array recipe (studies/slurm/): N shards merged back equal the
# single run byte for byte, contiguous and (old) strided splits alike.
add_test(NAME slurm_merge
  COMMAND sh ${_dc_golden_dir}/check_slurm.sh $<TARGET_FILE:dlrmc>
          ${PROJECT_SOURCE_DIR}/studies/capacity-planning.yaml
          ${_dc_golden_out}/slurm
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
