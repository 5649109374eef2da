kernel
gemm
--csv
kernel_csv_unknown_column.csv
--gpu
V100
