# tests/ux/: what a new user trips over, end to end (tests/ux/check_ux.py):
# the host layout of a bare GPU count, points that do not fit, swept keys
# as columns, the progress bar on a terminal, the HTML report, the
# capacity curve, replay's help and `make demo`.
find_program(DC_UX_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(DC_UX_PYTHON3)
  foreach(check host_layout fits unitless_bytes swept_columns progress
                huge_sweep replay_help make_demo capacity_curve html)
    add_test(NAME ux_${check}
      COMMAND ${DC_UX_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/ux/check_ux.py
              $<TARGET_FILE:dlrmc> ${check}
      WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    set_tests_properties(ux_${check} PROPERTIES LABELS unit TIMEOUT 120)
  endforeach()
endif()
