# 300,000 ET nodes with descending ids (13 MB): the import sorted them
# by insertion, past 300 s. It must take seconds.
awk 'BEGIN {
  print "{\"schema\": \"1.0.2-chakra.0.0.4\", \"nodes\": ["
  for (i = 300000; i >= 1; i--)
    printf "{\"id\": %d, \"name\": \"aten::relu\", \"ctrl_deps\": 0}%s\n", \
      i, (i > 1 ? "," : "")
  print "]}"
}' >"$T/desc.json"
run 0 replay "$T/desc.json" --gpu A100
out_has "300000 nodes"
