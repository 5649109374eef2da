/*
 * gen_trace.c — writes a synthetic PyTorch profiler (Kineto) trace of at
 * least the requested size for the trace benchmark (tests/trace.cmake,
 * target bench_trace): ProfilerStep#N windows holding forward ops on the
 * main thread and backward ops on an autograd thread, each op with a
 * nested aten op, cudaLaunchKernel calls linked by correlation to kernels
 * on stream 7, ac2g flow events, and the args (Input Dims, Call stack,
 * kernel launch parameters) that make real traces large. Nothing large
 * is committed: the file is generated at benchmark time.
 *
 * usage: gen_trace OUT.json MEGABYTES
 */
#include <stdio.h>
#include <stdlib.h>

static const char *const ops[] = {"aten::linear",        "aten::relu",
                                  "aten::cat",           "aten::bmm",
                                  "aten::embedding_bag", "aten::to"};
static const char *const kernels[] = {
    "volta_sgemm_128x64_nn",
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >"
    "(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, "
    "unsigned int, 2, 128, 1>(float*, at::native::(anonymous namespace)::"
    "CatArrInputTensorMetadata<float, unsigned int, 128, 1>, at::native::"
    "(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, "
    "unsigned int)",
    "void split_embedding_codegen_forward_unweighted_kernel<float, float, "
    "float, long, 2ul>"};

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen_trace OUT.json MEGABYTES\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "w");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  long long target = atoll(argv[2]) * 1000000LL;
  fprintf(f, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n"
             "  \"traceEvents\": [\n");
  long long ts = 1661203462598738LL, corr = 1, ext = 1;
  const long long step_us = 20000;
  int first = 1;
  for (long long step = 1; ftell(f) < target; step++) {
    long long t0 = ts;
    fprintf(f,
            "%s    {\"ph\": \"X\", \"cat\": \"user_annotation\", "
            "\"name\": \"ProfilerStep#%lld\", \"pid\": 100, \"tid\": 100, "
            "\"ts\": %lld, \"dur\": %lld, \"args\": {\"External id\": "
            "%lld}}",
            first ? "" : ",\n", step, t0, step_us, ext++);
    first = 0;
    long long t = t0 + 5, gpu = t0 + 20;
    for (int k = 0; t < t0 + step_us - 100; k++) {
      int tid = (k % 3 == 2) ? 101 : 100;
      const char *op = ops[k % 6];
      const char *kn = kernels[k % 4];
      fprintf(f,
              ",\n    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
              "\"%s\", \"pid\": 100, \"tid\": %d, \"ts\": %lld, \"dur\": "
              "40, \"args\": {\"External id\": %lld, \"Record function "
              "id\": 0, \"Input Dims\": [[2048, 512], [512, 512], [512]], "
              "\"Input type\": [\"float\", \"float\", \"float\"], "
              "\"Call stack\": \"dlrm_s_pytorch.py(312): apply_mlp;"
              "torch/nn/modules/module.py(1194): _call_impl\"}}",
              op, tid, t, ext++);
      fprintf(f,
              ",\n    {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
              "\"aten::addmm\", \"pid\": 100, \"tid\": %d, \"ts\": %lld, "
              "\"dur\": 30, \"args\": {\"External id\": %lld, \"Input "
              "Dims\": [[512], [2048, 512], [512, 512], [], []]}}",
              tid, t + 3, ext++);
      for (int l = 0; l < 2; l++) {
        long long lt = t + 8 + 10 * l;
        fprintf(f,
                ",\n    {\"ph\": \"X\", \"cat\": \"cuda_runtime\", "
                "\"name\": \"cudaLaunchKernel\", \"pid\": 100, \"tid\": "
                "%d, \"ts\": %lld, \"dur\": 6, \"args\": {\"External "
                "id\": %lld, \"cbid\": 211, \"correlation\": %lld}}",
                tid, lt, corr, corr);
        fprintf(f,
                ",\n    {\"ph\": \"s\", \"id\": %lld, \"pid\": 100, "
                "\"tid\": %d, \"ts\": %lld, \"cat\": \"ac2g\", \"name\": "
                "\"ac2g\"}",
                corr, tid, lt);
        if (gpu < lt + 8) gpu = lt + 8;
        fprintf(f,
                ",\n    {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                "\"%s\", \"pid\": 0, \"tid\": 7, \"ts\": %lld, \"dur\": "
                "12, \"args\": {\"External id\": %lld, \"queued\": 0, "
                "\"device\": 0, \"context\": 1, \"stream\": 7, "
                "\"correlation\": %lld, \"registers per thread\": 90, "
                "\"shared memory\": 49152, \"blocks per SM\": 0.5, "
                "\"warps per SM\": 2.0, \"grid\": [54, 1, 1], \"block\": "
                "[128, 1, 1], \"est. achieved occupancy %%\": 6}}",
                kn, gpu, corr, corr);
        fprintf(f,
                ",\n    {\"ph\": \"f\", \"id\": %lld, \"pid\": 0, "
                "\"tid\": 7, \"ts\": %lld, \"cat\": \"ac2g\", \"name\": "
                "\"ac2g\", \"bp\": \"e\"}",
                corr, gpu);
        gpu += 13;
        corr++;
      }
      t += 47;
    }
    ts = t0 + step_us + 10;
  }
  fprintf(f, "\n  ]\n}\n");
  if (fclose(f) != 0) {
    perror(argv[1]);
    return 1;
  }
  return 0;
}
