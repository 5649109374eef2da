# The README's result tables (blocks between <!-- NAME:begin/end --> after
# a `dlrmc run ...` command) are what that command prints today
# (tests/readme/check_readme.py). Refresh them after an intended change:
#   python3 tests/readme/check_readme.py build/compiler/dlrmc README.md --update
find_program(DC_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(DC_PYTHON3)
  add_test(NAME readme_tables
    COMMAND ${DC_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/readme/check_readme.py
            $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR}/README.md
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endif()
