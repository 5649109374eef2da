/*
 * test_support_outfile.c — atomic output files: the file appears whole or
 * not at all, with the mode a plain create would give it; an aborted file
 * leaves nothing; a directory is refused; a device (/dev/null) is written
 * in place and stays a device (renaming over it once replaced the node).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/support/support.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  strcpy(dir, "/tmp/dc-outfile-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int count_entries(void) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static int teardown(void **state) {
  (void)state;
  DIR *d = opendir(dir);
  char p[512];
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    unlink(p);
  }
  closedir(d);
  rmdir(dir);
  return 0;
}

static void test_write_and_mode(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/out.csv", dir);
  mode_t old = umask(022);
  dc_buf err = {0};
  assert_true(dc_file_write_atomic(path, "a,b\n", 4, &err));
  umask(old);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_size, 4);
  assert_int_equal(st.st_mode & 0777, 0644); /* not mkstemp's 0600 */
  assert_int_equal(count_entries(), 1);     /* no temporary left */
  dc_buf_free(&err);
}

static void test_abort_leaves_nothing(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/never.csv", dir);
  dc_outfile f;
  dc_buf err = {0};
  assert_true(dc_outfile_open(&f, path, &err));
  assert_true(dc_outfile_write(&f, "partial", 7, &err));
  assert_int_equal(access(path, F_OK), -1); /* not visible while writing */
  dc_outfile_abort(&f);
  assert_int_equal(count_entries(), 0);
  dc_buf_free(&err);
}

static void test_directory_refused(void **state) {
  (void)state;
  dc_buf err = {0};
  assert_false(dc_file_write_atomic(dir, "x", 1, &err));
  assert_non_null(strstr(err.data, "is a directory"));
  dc_buf_free(&err);
}

static void test_device_in_place(void **state) {
  (void)state;
  dc_buf err = {0};
  assert_true(dc_file_write_atomic("/dev/null", "x\n", 2, &err));
  struct stat st;
  assert_int_equal(stat("/dev/null", &st), 0);
  assert_true(S_ISCHR(st.st_mode));
  dc_buf_free(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_write_and_mode, setup, teardown),
      cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_directory_refused, setup,
                                      teardown),
      cmocka_unit_test(test_device_in_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
