# `dlrmc graph` on one study, STUDY: its first and last point, in text,
# dot and et. Each must exit 0 with output; the ET must parse as JSON with
# the Chakra schema 1.1.1-chakra.0.0.4 (python3), and the DOT must parse
# (Graphviz's gc, which reads a graph without laying it out) and, when it
# is at most 100 KiB, render (dot -Tsvg): Graphviz's layout grows faster
# than linearly, and a 200 KiB graph takes a minute to lay out. Each tool
# is used when installed (a message says when not). tests/graph.cmake
# registers one test per study (graph_studies_<study>).
#   cmake -DDLRMC=... -DSTUDY=studies/X.yaml -DWORK=dir -P check_studies.cmake
set(studies ${STUDY})
file(MAKE_DIRECTORY ${WORK})
find_program(PYTHON3 python3)
find_program(DOT dot)
if(DOT)
  get_filename_component(_dot_dir ${DOT} DIRECTORY)
  find_program(GVGC gc HINTS ${_dot_dir} NO_DEFAULT_PATH)
endif()
if(NOT PYTHON3)
  message(STATUS "python3 not found: ET output not parsed")
endif()
if(NOT DOT)
  message(STATUS "dot not found: DOT output not rendered")
endif()
foreach(s ${studies})
  get_filename_component(base ${s} NAME_WE)
  execute_process(COMMAND ${DLRMC} check ${s} OUTPUT_VARIABLE chk
                  ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dlrmc check ${s} failed:\n${err}")
  endif()
  string(REGEX MATCH "ok, ([0-9]+) point" m "${chk}")
  set(n ${CMAKE_MATCH_1})
  math(EXPR last "${n} - 1")
  set(points 0)
  if(last GREATER 0)
    list(APPEND points ${last})
  endif()
  foreach(pt ${points})
    foreach(fmt text dot et)
      set(out ${WORK}/${base}_${pt}.${fmt})
      file(REMOVE ${out})
      execute_process(COMMAND ${DLRMC} graph ${s} --point ${pt}
                              --format ${fmt} -o ${out}
                      ERROR_VARIABLE err RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0 OR NOT EXISTS ${out})
        message(FATAL_ERROR "dlrmc graph ${s} --point ${pt} --format ${fmt} "
                            "failed (${rc}):\n${err}")
      endif()
      file(SIZE ${out} size)
      if(size EQUAL 0)
        message(FATAL_ERROR "empty output: ${out}")
      endif()
      if(fmt STREQUAL "et" AND PYTHON3)
        execute_process(COMMAND ${PYTHON3} -c
          "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']=='1.1.1-chakra.0.0.4'; assert any(n['name'] in ('aten::linear','fused::linear_relu') for n in d['nodes']); assert all(len({len(n[k][f]) for f in ('values','shapes','types','strides')})==1 for n in d['nodes'] for k in ('inputs','outputs')), 'inputs/outputs lists of unequal length'"
          ${out} RESULT_VARIABLE rc ERROR_VARIABLE err)
        if(NOT rc EQUAL 0)
          message(FATAL_ERROR "ET of ${s} point ${pt} is not valid:\n${err}")
        endif()
      endif()
      if(fmt STREQUAL "dot")
        file(READ ${out} head LIMIT 64)
        math(EXPR at "${size} - 3")
        file(READ ${out} tail OFFSET ${at})
        if(NOT head MATCHES "^digraph" OR NOT tail MATCHES "}")
          message(FATAL_ERROR "${out}: not a DOT digraph")
        endif()
      endif()
      if(fmt STREQUAL "dot" AND GVGC)
        # gc exits 0 on a syntax error: its message is the verdict
        execute_process(COMMAND ${GVGC} ${out} OUTPUT_QUIET
                        RESULT_VARIABLE rc ERROR_VARIABLE err)
        if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
          message(FATAL_ERROR "${out} does not parse as DOT:\n${err}")
        endif()
      endif()
      if(fmt STREQUAL "dot" AND DOT AND NOT size GREATER 102400)
        execute_process(COMMAND ${DOT} -Tsvg ${out} -o ${out}.svg
                        RESULT_VARIABLE rc ERROR_VARIABLE err)
        if(NOT rc EQUAL 0)
          message(FATAL_ERROR "dot cannot render ${out}:\n${err}")
        endif()
      endif()
    endforeach()
  endforeach()
  message(STATUS "${base}: points ${points} exported in text, dot, et")
endforeach()
