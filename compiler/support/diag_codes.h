/*
 * diag_codes.h — the one table of diagnostic codes. Each row is
 * X(SYMBOL, "Ennnn", "title"). Codes are stable: never renumber or reuse a
 * row; add new ones at the end of their section. spec/diagnostics.md lists
 * every row (a unit test checks that it does).
 *
 * Sections: E00xx files and YAML, E01xx study schema, E02xx values and
 * units, E03xx sweeps and overrides, E04xx catalogs, E05xx graph building,
 * E06xx kernel models and fitting, E07xx runtime and overhead profiles,
 * E08xx traces.
 */
#ifndef DC_DIAG_CODES_H
#define DC_DIAG_CODES_H

#define DC_DIAG_CODES(X)                                                    \
  /* files and YAML */                                                      \
  X(IO, "E0001", "cannot read file")                                        \
  X(TOO_LARGE, "E0002", "file too large")                                   \
  X(YAML_SYNTAX, "E0010", "YAML syntax error")                              \
  X(YAML_TAB, "E0011", "tab character in indentation")                      \
  X(YAML_ENCODING, "E0012", "invalid UTF-8")                                \
  X(YAML_DUP_KEY, "E0013", "duplicate key")                                 \
  X(YAML_KEY_KIND, "E0014", "key is not a scalar")                          \
  X(YAML_ALIAS, "E0015", "alias problem")                                   \
  X(YAML_LIMIT, "E0016", "document too deep or too large")                  \
  X(YAML_MULTI_DOC, "E0017", "more than one YAML document")                 \
  /* study schema */                                                        \
  X(UNKNOWN_KEY, "E0101", "unknown key")                                    \
  X(MISSING_KEY, "E0102", "missing required key")                           \
  X(WRONG_TYPE, "E0103", "wrong type")                                      \
  X(BAD_ENUM, "E0104", "value not allowed")                                 \
  X(CONFLICT, "E0105", "conflicting keys")                                  \
  X(EMPTY_LIST, "E0106", "empty list")                                      \
  /* values and units */                                                    \
  X(BAD_NUMBER, "E0201", "not a number")                                    \
  X(BAD_SIZE, "E0202", "not a valid size")                                  \
  X(BAD_TIME, "E0203", "not a valid duration")                              \
  X(OUT_OF_RANGE, "E0204", "value out of range")                            \
  X(OVERFLOW, "E0205", "64-bit overflow")                                   \
  X(BAD_REGEX, "E0206", "invalid regular expression")                       \
  X(SEMANTIC, "E0207", "inconsistent configuration")                        \
  X(MEMORY_BUDGET, "E0208", "point over the memory budget")                 \
  /* sweeps and overrides */                                                \
  X(SWEEP_PATH, "E0301", "sweep path does not exist")                       \
  X(SWEEP_EMPTY, "E0302", "empty sweep")                                    \
  X(SWEEP_ZIP, "E0303", "zip sweep lists differ in length")                 \
  X(SWEEP_RANGE, "E0304", "bad sweep range")                                \
  X(SWEEP_TOO_BIG, "E0305", "too many sweep points")                        \
  X(BAD_OVERRIDE, "E0306", "bad -D override")                               \
  X(BASELINE, "E0307", "bad baseline")                                      \
  X(BAD_COLUMN, "E0308", "unknown output column")                           \
  /* catalogs */                                                            \
  X(UNKNOWN_GPU, "E0401", "unknown GPU")                                    \
  X(UNKNOWN_PRESET, "E0402", "unknown model preset")                        \
  X(UNKNOWN_PROFILE, "E0403", "unknown overhead profile")                   \
  X(BAD_CATALOG, "E0404", "invalid catalog file")                           \
  X(NO_PRECISION, "E0405", "precision the GPU lacks")                       \
  /* graph building */                                                      \
  X(GRAPH, "E0501", "cannot build the training graph")                      \
  X(SHARDING, "E0502", "invalid sharding plan")                             \
  X(NO_PLAN, "E0503", "no sharding plan fits in memory")                    \
  /* kernel models and fitting */                                           \
  X(KERNEL, "E0601", "cannot price kernel")                                 \
  X(BAD_MODEL, "E0602", "invalid fitted model")                             \
  X(BAD_CSV, "E0603", "invalid CSV data")                                   \
  /* runtime and overhead profiles */                                       \
  X(BAD_PROFILE, "E0701", "invalid overhead profile")                       \
  X(BAD_RESULTS, "E0702", "invalid results table")                          \
  X(NON_FINITE, "E0703", "time or count not representable")                 \
  /* traces */                                                              \
  X(BAD_TRACE, "E0801", "invalid trace")

#endif /* DC_DIAG_CODES_H */
