# tests/bad/: malformed studies, each with the exact stderr `dlrmc check`
# must print (NAME.stderr) and optional extra arguments (NAME.args). One
# ctest per file, labelled "bad"; DC_REGEN=1 ctest -L bad rewrites them.
file(GLOB DC_BAD_STUDIES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/bad/*.yaml)
foreach(f ${DC_BAD_STUDIES})
  get_filename_component(n ${f} NAME_WE)
  add_test(NAME bad_${n}
    COMMAND ${CMAKE_COMMAND} -DDLRMC=$<TARGET_FILE:dlrmc> -DNAME=${n}
            -DDIR=${CMAKE_CURRENT_SOURCE_DIR}/bad
            -P ${CMAKE_CURRENT_SOURCE_DIR}/bad/run_bad.cmake)
  set_tests_properties(bad_${n} PROPERTIES LABELS bad ENVIRONMENT NO_COLOR=1)
endforeach()
