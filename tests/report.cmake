# The HTML report (spec/report.md), checked with python3's
# standard library (tests/report/check_report.py):
#  - report_html: `run --format html` of six studies is well-formed (HTML
#    and XML parsers), self-contained, its SVG numbers finite; the main
#    chart's marks carry the CSV's e2e_ms and sit on a linear axis; each
#    breakdown adds up to e2e_ms; per-rank bars carry --per-rank's
#    figures; `report` of the saved JSON lines draws the same SVG;
#  - report_golden: the SVG of gpu-generations and sharding-balance, byte
#    for byte (DC_REGEN_GOLDEN=1 ctest -R report_golden rewrites them);
#  - report_bad: tables dlrmc did not write are refused (exit 1, file and
#    column named) and nothing is written;
#  - report_chromium: paper-configs' report rendered by headless Chromium
#    is not blank; skipped (77) where Chromium is not installed (CI).
find_program(DC_PYTHON3_REPORT python3)
if(DC_PYTHON3_REPORT)
  foreach(_mode html golden bad chromium)
    set(_m ${_mode})
    if(_mode STREQUAL "html")
      set(_m check)
    endif()
    add_test(NAME report_${_mode}
      COMMAND ${DC_PYTHON3_REPORT}
              ${PROJECT_SOURCE_DIR}/tests/report/check_report.py ${_m}
              $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR}
              ${CMAKE_CURRENT_BINARY_DIR}/report-${_mode}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(report_${_mode} PROPERTIES SKIP_RETURN_CODE 77
                         ENVIRONMENT "DLRMC_NO_PROGRESS=1")
  endforeach()
endif()
