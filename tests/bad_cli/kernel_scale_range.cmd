kernel
gemm
m=10
n=1
k=1
scale=1e308
--gpu
V100
