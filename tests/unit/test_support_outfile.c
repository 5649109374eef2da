/*
 * test_support_outfile.c — atomic output files: the file appears whole or
 * not at all, with the mode a plain create would give it; an aborted file
 * leaves nothing; a directory is refused; a device (/dev/null) is written
 * in place and stays a device (renaming over it once replaced the node);
 * a replaced file keeps its mode; a symbolic link's target is written;
 * the temporary is .NAME.tmp-PID-XXXXXX and a dead process's is removed
 * by the next open. Hidden files count: temporaries are.
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
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static int teardown(void **state) {
  (void)state;
  DIR *d = opendir(dir);
  char p[512];
  for (struct dirent *e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
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

static void test_mode_kept(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/secret.csv", dir);
  FILE *f = fopen(path, "w");
  fputs("old\n", f);
  fclose(f);
  chmod(path, 0600);
  dc_buf err = {0};
  assert_true(dc_file_write_atomic(path, "new\n", 4, &err));
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(st.st_size, 4);
  dc_buf_free(&err);
}

static void test_symlink_target(void **state) {
  (void)state;
  char real[128], link[128];
  snprintf(real, sizeof real, "%s/real.csv", dir);
  snprintf(link, sizeof link, "%s/link.csv", dir);
  assert_int_equal(symlink("real.csv", link), 0); /* dangling, relative */
  dc_buf err = {0};
  assert_true(dc_file_write_atomic(link, "x\n", 2, &err));
  struct stat st;
  assert_int_equal(lstat(link, &st), 0);
  assert_true(S_ISLNK(st.st_mode));
  assert_int_equal(stat(real, &st), 0);
  assert_int_equal(st.st_size, 2);
  assert_int_equal(count_entries(), 2);
  dc_buf_free(&err);
}

static void test_stale_temp(void **state) {
  (void)state;
  char path[128], stale[192], live[192];
  snprintf(path, sizeof path, "%s/out.csv", dir);
  /* pid 2^22+1 is above Linux's pid_max limit: never a live process */
  snprintf(stale, sizeof stale, "%s/.out.csv.tmp-4194305-abcdef", dir);
  snprintf(live, sizeof live, "%s/.out.csv.tmp-1-abcdef", dir); /* init */
  fclose(fopen(stale, "w"));
  fclose(fopen(live, "w"));
  dc_outfile f;
  dc_buf err = {0};
  assert_true(dc_outfile_open(&f, path, &err));
  char want[64];
  snprintf(want, sizeof want, "/.out.csv.tmp-%ld-", (long)getpid());
  assert_non_null(strstr(f.tmp, want));
  assert_int_equal(access(stale, F_OK), -1); /* its process is gone */
  assert_int_equal(access(live, F_OK), 0);   /* pid 1 lives */
  assert_true(dc_outfile_commit(&f, &err));
  assert_int_equal(count_entries(), 2); /* out.csv and pid 1's */
  dc_buf_free(&err);
}

static void test_empty_name(void **state) {
  (void)state;
  dc_outfile f;
  dc_buf err = {0};
  assert_false(dc_outfile_open(&f, "", &err));
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
      cmocka_unit_test_setup_teardown(test_mode_kept, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symlink_target, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_temp, setup, teardown),
      cmocka_unit_test(test_empty_name),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
