# tests/harden/: reproducers of hostile inputs (spec/numbers.md, "Limits"):
# each NAME.sh runs dlrmc on one and checks that it exits 1 with the
# diagnostic or gives a finite, correct answer, within 20 s and 2 GB of
# address space (run.sh). Labelled "harden".
file(GLOB DC_HARDEN CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/harden/*.sh)
list(FILTER DC_HARDEN EXCLUDE REGEX "/(run|lib)\\.sh$")
set(_dc_harden_env "NO_COLOR=1;DLRMC_NO_PROGRESS=1")
if(DC_SANITIZE OR DC_FUZZ)
  list(APPEND _dc_harden_env "DC_HARDEN_NO_ULIMIT=1")
endif()
foreach(f ${DC_HARDEN})
  get_filename_component(n ${f} NAME_WE)
  add_test(NAME harden_${n}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/harden/run.sh $<TARGET_FILE:dlrmc> ${n})
  set_tests_properties(harden_${n} PROPERTIES LABELS harden TIMEOUT 60
                       ENVIRONMENT "${_dc_harden_env}")
endforeach()
