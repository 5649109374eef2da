# tests/outfile/: output-file safety end to end: temporaries
# removed on SIGINT/SIGTERM/SIGHUP (table and timelines), a SIGKILLed
# run's temporary removed by the next run, mode/owner kept, symlink
# targets written, stdout write errors exit 1, empty output names exit 2.
add_test(NAME outfile_safety
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/outfile/check_outfile.sh
          $<TARGET_FILE:dlrmc> ${CMAKE_CURRENT_SOURCE_DIR}/golden/invariants.yaml
          ${CMAKE_CURRENT_BINARY_DIR}/outfile-out
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(outfile_safety PROPERTIES
  ENVIRONMENT "DLRMC_NO_PROGRESS=1" TIMEOUT 120)
