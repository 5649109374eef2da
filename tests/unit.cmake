# Unit tests: tests/unit/test_<module>_<name>.c. Each links only the
# libraries its module may depend on (spec/design.md), so a test proves the
# dependency direction as well as the behaviour.
file(GLOB DC_UNIT_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_*.c)
foreach(f ${DC_UNIT_TESTS})
  get_filename_component(n ${f} NAME_WE)
  string(REGEX REPLACE "^test_" "" n ${n})
  if(n MATCHES "^support_")
    dc_add_unit_test(${n} dc_support)
  elseif(n MATCHES "^compiler_")
    dc_add_unit_test(${n} dc_compiler dc_support)
  elseif(n MATCHES "^graphgen_")
    dc_add_unit_test(${n} dc_graphgen dc_compiler dc_support)
  elseif(n MATCHES "^kernels_")
    dc_add_unit_test(${n} dc_kernels dc_support)
  elseif(n MATCHES "^bench_")
    if(TARGET dc_bench_core)
      dc_add_unit_test(${n} dc_bench_core dc_support)
    endif()
  else()
    dc_add_unit_test(${n} dc_runtime dc_trace dc_graphgen dc_kernels dc_compiler
                     dc_support)
  endif()
endforeach()

# Link interfaces: each library linked alone, as a whole archive, into
# tests/unit/linkage.c, so a library that calls another without declaring
# it in target_link_libraries fails to build (linkage_<library>).
foreach(lib dc_support dc_compiler dc_graphgen dc_kernels dc_runtime dc_trace
            dc_report)
  add_executable(test_linkage_${lib} ${CMAKE_CURRENT_SOURCE_DIR}/unit/linkage.c)
  target_link_libraries(test_linkage_${lib} PRIVATE
                        "$<LINK_LIBRARY:WHOLE_ARCHIVE,${lib}>" dc_warnings)
  add_test(NAME linkage_${lib} COMMAND test_linkage_${lib})
endforeach()
