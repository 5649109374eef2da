# The repository's layout rules (spec/design.md; the rules and the
# definition of a cycle are in tests/layout/check_layout.py): no include
# or call cycle between files, each folder uses only the folders below it
# (compiler/support/ none), no two source files share a name, no source
# file over 1,000 lines, every repository path a comment or document names
# exists, no document outside the repository cited, at most three issue
# numbers, internal headers named *_int.h and their names carrying their
# folder's prefix (dc_ is the contracts').
#  - layout: the check on this tree;
#  - layout_selftest: the check on synthetic trees it writes to a
#    temporary directory, one per planted violation, each of which must be
#    reported (and a clean tree must pass), so that `layout` can fail.
# python3 (standard library only) is in the Makefile's DEPS.
find_program(DC_PYTHON3_LAYOUT python3)
if(DC_PYTHON3_LAYOUT)
  add_test(NAME layout
    COMMAND ${DC_PYTHON3_LAYOUT}
            ${CMAKE_CURRENT_SOURCE_DIR}/layout/check_layout.py
            ${PROJECT_SOURCE_DIR})
  add_test(NAME layout_selftest
    COMMAND ${DC_PYTHON3_LAYOUT}
            ${CMAKE_CURRENT_SOURCE_DIR}/layout/check_layout.py --self-test)
else()
  message(WARNING "python3 not found: the layout tests are not registered")
endif()
