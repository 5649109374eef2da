/*
 * test_support_hash.c — the shared hash, generator and integer map of
 * compiler/support/ (hash.c, intmap.c): FNV-1a's published test vectors,
 * the byte and value forms agreeing, splitmix64's first outputs for seed
 * 0, and dc_imap through growth, overwrites and negative keys.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "compiler/support/support.h"

static void fnv1a_vectors(void **state) {
  (void)state;
  /* FNV-1a 64 of "" is the offset basis; of "a" and "foobar", the
   * values in the FNV authors' test suite */
  assert_true(dc_fnv1a_str(DC_FNV1A_INIT, "") == DC_FNV1A_INIT);
  assert_true(dc_fnv1a_str(DC_FNV1A_INIT, "a") == 0xaf63dc4c8601ec8cull);
  assert_true(dc_fnv1a_str(DC_FNV1A_INIT, "foobar") ==
              0x85944171f73967e8ull);
  assert_true(dc_fnv1a(DC_FNV1A_INIT, "foobar", 6) ==
              dc_fnv1a_str(DC_FNV1A_INIT, "foobar"));
  /* a value's 8 bytes, low first, as bytes */
  uint64_t x = 0x0807060504030201ull;
  const unsigned char b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  assert_true(dc_fnv1a_u64(DC_FNV1A_INIT, x) ==
              dc_fnv1a(DC_FNV1A_INIT, b, sizeof b));
}

static void splitmix64_sequence(void **state) {
  (void)state;
  uint64_t s = 0;
  assert_true(dc_splitmix64(&s) == 0xe220a8397b1dcdafull);
  assert_true(dc_splitmix64(&s) == 0x6e789e6aa1b965f4ull);
  assert_true(dc_splitmix64(&s) == 0x06c45d188009454full);
}

static void imap_grows_and_overwrites(void **state) {
  (void)state;
  dc_imap m = {0};
  assert_int_equal(dc_imap_get(&m, 7), -1); /* empty: no table yet */
  for (int32_t i = 0; i < 5000; i++)
    dc_imap_put(&m, (int64_t)i * 1024 - 2500000, i); /* colliding strides */
  assert_int_equal((int64_t)m.n, 5000);
  for (int32_t i = 0; i < 5000; i++)
    assert_int_equal(dc_imap_get(&m, (int64_t)i * 1024 - 2500000), i);
  assert_int_equal(dc_imap_get(&m, 1), -1);
  dc_imap_put(&m, -2500000, 42); /* overwrite: the count stays */
  assert_int_equal(dc_imap_get(&m, -2500000), 42);
  assert_int_equal((int64_t)m.n, 5000);
  assert_true(m.cap >= 2 * m.n);
  dc_imap_free(&m);
  assert_int_equal(dc_imap_get(&m, 0), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fnv1a_vectors),
      cmocka_unit_test(splitmix64_sequence),
      cmocka_unit_test(imap_grows_and_overwrites),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
