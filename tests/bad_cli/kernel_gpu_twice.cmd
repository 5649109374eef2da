kernel
gemm
--csv
kernel_gpu_twice.csv
--gpu
V100
