# The JSON Schema for editors (spec/study.schema.json) must accept every
# example study (studies/, tests/fuzz/corpus/, spec/study.md). Needs
# python3 with jsonschema and yaml (Debian: python3-jsonschema,
# python3-yaml); skipped (77) without them.
# The distribution's python3 first: that is where apt installs those two
# modules, whatever python3 comes first on PATH (pyenv, a venv).
find_program(DC_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT DC_PYTHON3)
  find_program(DC_PYTHON3 python3)
endif()
if(DC_PYTHON3)
  add_test(NAME study_schema
    COMMAND ${DC_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/schema/validate.py)
  set_tests_properties(study_schema PROPERTIES SKIP_RETURN_CODE 77
    ENVIRONMENT "DC_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endif()
