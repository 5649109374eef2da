# The option reader shared by every command (compiler/cli/cmd_common.c,
# cli_next): `--opt value` and `--opt=value` agree, `--` ends the
# options, misuse is a usage error (tests/cli/check_options.sh).
add_test(NAME cli_options
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_options.sh
          $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR})
set_tests_properties(cli_options PROPERTIES
  ENVIRONMENT "NO_COLOR=1;DLRMC_NO_PROGRESS=1")

# The metric names' one table (compiler/support/metric_names.h) against
# `dlrmc help run` and spec/study.md (tests/cli/check_metrics.sh).
add_test(NAME cli_metric_names
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/check_metrics.sh
          $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR})
