# The documents' figures (blocks between <!-- NAME:begin/end --> after a
# `dlrmc ...` command, in README.md and the guides under spec/) are what
# that command prints today (tests/readme/check_readme.py). Refresh them
# after an intended change:
#   python3 tests/readme/check_readme.py build/compiler/dlrmc README.md spec/*.md --update
# The front door stays a front door: README.md has at most 400 lines and
# names no file outside the repository (tests/readme/check_front_door.py).
find_program(DC_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(DC_PYTHON3)
  file(GLOB DC_GUIDES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/spec/*.md)
  add_test(NAME readme_tables
    COMMAND ${DC_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/readme/check_readme.py
            $<TARGET_FILE:dlrmc> ${PROJECT_SOURCE_DIR}/README.md ${DC_GUIDES}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  add_test(NAME readme_front_door
    COMMAND ${DC_PYTHON3}
            ${PROJECT_SOURCE_DIR}/tests/readme/check_front_door.py
            ${PROJECT_SOURCE_DIR}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(readme_front_door PROPERTIES LABELS unit)
endif()
