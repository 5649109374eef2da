trace
stats
trace_nul_name.json
