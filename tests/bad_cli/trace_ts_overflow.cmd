trace
stats
trace_ts_overflow.json
