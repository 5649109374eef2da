# run_bad.cmake — one malformed study of tests/bad/: `dlrmc check NAME.yaml`
# (plus the arguments listed one per line in NAME.args, if any) must exit 1,
# print nothing on stdout, and print exactly NAME.stderr on stderr.
# Run from tests/bad/ so that the file names in diagnostics are stable.
# With DC_REGEN=1 in the environment the expected file is rewritten.
# With -DCLI=1 (tests/bad_cli/) the whole command line after `dlrmc` is
# NAME.cmd, one argument per line, instead of `check NAME.yaml`.
#   cmake -DDLRMC=... -DNAME=... -DDIR=... [-DCLI=1] -P run_bad.cmake
set(args "")
if(CLI)
  file(STRINGS ${DIR}/${NAME}.cmd args)
else()
  if(EXISTS ${DIR}/${NAME}.args)
    file(STRINGS ${DIR}/${NAME}.args args)
  endif()
  list(PREPEND args check ${NAME}.yaml)
endif()
execute_process(COMMAND ${DLRMC} ${args}
  WORKING_DIRECTORY ${DIR}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
  TIMEOUT 20)
if(DEFINED ENV{DC_REGEN})
  file(WRITE ${DIR}/${NAME}.stderr "${err}")
endif()
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "${NAME}: exit status ${rc}, expected 1\n${err}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "${NAME}: printed on stdout:\n${out}")
endif()
file(READ ${DIR}/${NAME}.stderr want)
if(NOT err STREQUAL want)
  message(FATAL_ERROR "${NAME}: stderr differs\n--- expected\n${want}--- got\n${err}")
endif()
