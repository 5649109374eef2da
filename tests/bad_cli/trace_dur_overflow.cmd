trace
stats
trace_dur_overflow.json
