/*
 * test_support_yaml.c — the YAML reader (compiler/support/yaml.c): 1-based
 * spans on every node, scalars' quoting and nulls, duplicate keys, tabs,
 * bounded depth, aliases shared and alias bombs refused, several documents.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "compiler/support/support.h"

typedef struct fx {
  dc_arena a;
  dc_diags d;
} fx;

static dc_node *parse(fx *f, const char *text) {
  dc_arena_init(&f->a);
  memset(&f->d, 0, sizeof f->d);
  const dc_source *s = dc_source_from_memory("m.yaml", text, strlen(text),
                                             &f->a);
  return dc_yaml_parse(s, &f->a, &f->d);
}

static void done(fx *f) {
  dc_diags_free(&f->d);
  dc_arena_free(&f->a);
}

static void test_spans(void **state) {
  (void)state;
  fx f;
  dc_node *r = parse(&f, "study: x\ntraining:\n  batch_size: 2048\n");
  assert_non_null(r);
  assert_int_equal(r->kind, DC_NODE_MAP);
  assert_int_equal(r->n, 2);
  const dc_node *t = dc_node_get(r, "training");
  assert_non_null(t);
  const dc_node *b = dc_node_get(t, "batch_size");
  assert_string_equal(b->text, "2048");
  assert_int_equal(b->span.line, 3);
  assert_int_equal(b->span.col, 15);
  assert_int_equal(b->span.len, 4);
  const dc_node *k = dc_node_key(t, "batch_size");
  assert_int_equal(k->span.line, 3);
  assert_int_equal(k->span.col, 3);
  assert_null(dc_node_get(r, "missing"));
  done(&f);
}

/* A UTF-8 byte-order mark before the first key ("did
 * not find expected <document start>") is no part of the text: the key is
 * 'study' at 1:1. */
static void test_bom(void **state) {
  (void)state;
  fx f;
  dc_node *r = parse(&f, "\xEF\xBB\xBFstudy: x\nmodel: {preset: p}\n");
  assert_non_null(r);
  assert_int_equal(f.d.errors, 0);
  const dc_node *k = dc_node_key(r, "study");
  assert_non_null(k);
  assert_int_equal(k->span.line, 1);
  assert_int_equal(k->span.col, 1);
  assert_non_null(dc_node_get(r, "model"));
  done(&f);
}

static void test_scalars(void **state) {
  (void)state;
  fx f;
  dc_node *r = parse(&f, "a: '12'\nb: ~\nc:\nd: [1, \"x\"]\n");
  assert_non_null(r);
  assert_true(dc_node_get(r, "a")->quoted);
  assert_true(dc_node_get(r, "b")->is_null);
  assert_true(dc_node_get(r, "c")->is_null);
  const dc_node *d = dc_node_get(r, "d");
  assert_int_equal(d->kind, DC_NODE_SEQ);
  assert_int_equal(d->n, 2);
  assert_false(d->items[0]->quoted);
  assert_true(d->items[1]->quoted);
  done(&f);
}

static void test_utf8_columns(void **state) {
  (void)state;
  fx f;
  /* "é" is two bytes: the column of x counts bytes, 1-based */
  dc_node *r = parse(&f, "d: \"é\"\nx: 1\n");
  assert_non_null(r);
  assert_int_equal(dc_node_get(r, "x")->span.col, 4);
  done(&f);
}

static const char *first_code(const char *text) {
  static char id[8];
  fx f;
  dc_node *r = parse(&f, text);
  assert_null(r);
  assert_true(f.d.errors > 0);
  strcpy(id, dc_diag_code_id(f.d.items[0].code));
  done(&f);
  return id;
}

static void test_errors(void **state) {
  (void)state;
  assert_string_equal(first_code("a: 1\na: 2\n"), "E0013");
  assert_string_equal(first_code("a:\n\tb: 1\n"), "E0011");
  assert_string_equal(first_code("a: [1, 2\n"), "E0010");
  assert_string_equal(first_code("a: *nothing\n"), "E0015");
  assert_string_equal(first_code("a: 1\n---\nb: 2\n"), "E0017");
  assert_string_equal(first_code("? [a]\n: 1\n"), "E0014");
  assert_string_equal(first_code("a: \xff\n"), "E0012");
}

static void test_depth_limit(void **state) {
  (void)state;
  char buf[400];
  size_t n = 0;
  for (int i = 0; i < 100; i++) buf[n++] = '[';
  for (int i = 0; i < 100; i++) buf[n++] = ']';
  buf[n] = '\0';
  assert_string_equal(first_code(buf), "E0016");
}

static void test_alias_bomb(void **state) {
  (void)state;
  char buf[4096];
  size_t n = (size_t)snprintf(buf, sizeof buf, "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n");
  for (int i = 1; i < 10; i++)
    n += (size_t)snprintf(buf + n, sizeof buf - n,
                          "a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,"
                          "*a%d,*a%d]\n",
                          i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
                          i - 1, i - 1, i - 1, i - 1);
  assert_string_equal(first_code(buf), "E0016");
}

static void test_alias_shared(void **state) {
  (void)state;
  fx f;
  dc_node *r = parse(&f, "a: &x {k: 1}\nb: *x\n");
  assert_non_null(r);
  assert_ptr_equal(dc_node_get(r, "a"), dc_node_get(r, "b"));
  done(&f);
}

static void test_empty(void **state) {
  (void)state;
  fx f;
  dc_node *r = parse(&f, "");
  assert_non_null(r);
  assert_int_equal(r->kind, DC_NODE_MAP);
  assert_int_equal(r->n, 0);
  done(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spans),       cmocka_unit_test(test_scalars),
      cmocka_unit_test(test_utf8_columns), cmocka_unit_test(test_errors),
      cmocka_unit_test(test_depth_limit), cmocka_unit_test(test_alias_bomb),
      cmocka_unit_test(test_alias_shared), cmocka_unit_test(test_empty),
      cmocka_unit_test(test_bom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
