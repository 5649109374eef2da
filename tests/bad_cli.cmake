# tests/bad_cli/: hostile inputs to the commands other than `check` (trace
# files, GPU and overhead YAML, kernel parameters, CSV), each with the
# exact stderr dlrmc must print. NAME.cmd lists the arguments after
# `dlrmc`, one per line, run from tests/bad_cli/ (so file names in the
# diagnostics are stable); the exit status must be 1 and stdout empty.
# Labelled "bad": DC_REGEN=1 ctest -L bad rewrites NAME.stderr.
file(GLOB DC_BAD_CLI CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/bad_cli/*.cmd)
foreach(f ${DC_BAD_CLI})
  get_filename_component(n ${f} NAME_WE)
  add_test(NAME bad_cli_${n}
    COMMAND ${CMAKE_COMMAND} -DDLRMC=$<TARGET_FILE:dlrmc> -DNAME=${n}
            -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/bad_cli -DCLI=1
            -P ${CMAKE_CURRENT_SOURCE_DIR}/bad/run_bad.cmake)
  set_tests_properties(bad_cli_${n} PROPERTIES LABELS bad
                       ENVIRONMENT "NO_COLOR=1;DLRMC_NO_PROGRESS=1")
endforeach()
