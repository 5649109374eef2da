fit
gemm
fit_time_range.csv
-o
/dev/null
