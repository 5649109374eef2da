/*
 * bench_cupti.c — kernel timing from CUPTI's Activity API, as the paper
 * timed kernels with nvprof (§III-B): the GPU's own start and end
 * timestamps (ns) of every kernel, memcpy and memset, with no host timer
 * or event in the measured interval.
 *
 * CUPTI hands records over in buffers we supply (the "buffer requested"
 * callback) and returns them full (the "buffer completed" callback, which
 * may run on CUPTI's worker thread, hence the mutex). After each timed
 * iteration the driver synchronises and calls cuptiActivityFlushAll with
 * the FORCED flag, which delivers every completed record before it
 * returns; so the records summed between two collects are exactly those
 * of one iteration. Kernels use CONCURRENT_KERNEL (KIND_KERNEL would
 * serialise them). The record structs are those of the CUDA 13 headers:
 * CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4.
 */
#include <pthread.h>
#include <stdlib.h>

#include <cupti.h>

#include "kernels/bench/bench_run_int.h"

#define BUFFER_BYTES (8u << 20)
#define BUFFER_ALIGN 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t sum_ns;    /* since the last collect */
static int64_t n_records;  /* since the last collect */
static uint64_t dropped;   /* records CUPTI could not store */
static bool bad_timestamp; /* a record with end < start or zeros */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
                                      size_t *max_records) {
  *buffer = aligned_alloc(BUFFER_ALIGN, BUFFER_BYTES);
  *size = *buffer ? BUFFER_BYTES : 0;
  *max_records = 0;
}

static void account(uint64_t start, uint64_t end) {
  if (start == 0 || end < start) {
    bad_timestamp = true;
    return;
  }
  sum_ns += end - start;
  n_records++;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
                                      uint8_t *buffer, size_t size,
                                      size_t valid) {
  (void)ctx;
  (void)stream;
  (void)size;
  CUpti_Activity *rec = NULL;
  pthread_mutex_lock(&lock);
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
      account(k->start, k->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
      account(m->start, m->end);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
      account(m->start, m->end);
      break;
    }
    default:
      break;
    }
  }
  size_t d = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &d) == CUPTI_SUCCESS)
    dropped += d;
  pthread_mutex_unlock(&lock);
  free(buffer);
}

static bool cupti_ok(CUptiResult r, const char *what, dc_buf *err) {
  if (r == CUPTI_SUCCESS)
    return true;
  const char *msg = NULL;
  if (cuptiGetResultString(r, &msg) != CUPTI_SUCCESS || !msg)
    msg = "unknown error";
  dc_buf_printf(err, "%s: %s", what, msg);
  return false;
}

bool bn_timer_start(dc_buf *err) {
  return cupti_ok(cuptiActivityRegisterCallbacks(buffer_requested,
                                                 buffer_completed),
                  "cuptiActivityRegisterCallbacks", err) &&
         cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                  "cuptiActivityEnable(CONCURRENT_KERNEL)", err) &&
         cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY),
                  "cuptiActivityEnable(MEMCPY)", err) &&
         cupti_ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET),
                  "cuptiActivityEnable(MEMSET)", err);
}

bool bn_timer_collect(double *sum_us, int64_t *records, dc_buf *err) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    dc_buf_printf(err, "cudaDeviceSynchronize: %s", cudaGetErrorString(e));
    return false;
  }
  if (!cupti_ok(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
                "cuptiActivityFlushAll", err))
    return false;
  pthread_mutex_lock(&lock);
  *sum_us = (double)sum_ns / 1000.0;
  *records = n_records;
  bool lost = dropped > 0, bad = bad_timestamp;
  sum_ns = 0;
  n_records = 0;
  dropped = 0;
  bad_timestamp = false;
  pthread_mutex_unlock(&lock);
  if (lost || bad) {
    dc_buf_puts(err, lost ? "CUPTI dropped activity records"
                          : "CUPTI returned a record without timestamps");
    return false;
  }
  return true;
}

void bn_timer_stop(void) {
  (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
  (void)cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
}
