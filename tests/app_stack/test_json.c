/*
 * test_json.c - the app's JSON writer (app/json.c): the exact text of a
 * document with every kind of value, escaping of keys and strings,
 * non-finite numbers as null, arrays of objects, and a document nested
 * deeper than the writer keeps (the too-deep part becomes null and the
 * document stays balanced).
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "gz_test.h"
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *written(void (*fill)(gz_json_t *)) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  gz_json_t j;
  if (!f)
    return NULL;
  gz_json_begin(&j, f);
  fill(&j);
  gz_json_finish(&j);
  fclose(f);
  return buf;
}

static void every_kind(gz_json_t *j) {
  gz_json_string(j, "tool", "gz\"stack\\\n");
  gz_json_number(j, "ratio", 2.5);
  gz_json_number(j, "psnr", INFINITY);
  gz_json_bool(j, "ok", 1);
  gz_json_null(j, "none");
  gz_json_object(j, "time");
  gz_json_number(j, "total", 1);
  gz_json_end_object(j);
  gz_json_array(j, "rows");
  gz_json_object(j, NULL);
  gz_json_number(j, "size", 8);
  gz_json_end(j);
  gz_json_number(j, NULL, 3);
  gz_json_end(j);
  gz_json_raw(j, "stats", "{\"a\":1}");
  gz_json_raw(j, "empty", "");
  gz_json_object(j, "open"); /* left open: finish closes it */
  gz_json_bool(j, "k\"ey", 0);
}

static void too_deep(gz_json_t *j) {
  for (int d = 0; d < GZ_JSON_DEPTH + 3; d++)
    gz_json_array(j, d == 0 ? "deep" : NULL);
  gz_json_number(j, NULL, 1);
  for (int d = 0; d < GZ_JSON_DEPTH + 3; d++)
    gz_json_end(j);
  gz_json_number(j, "after", 2);
}

int main(void) {
  static const char *expect =
      "{\n  \"tool\": \"gz\\\"stack\\\\\\u000a\",\n  \"ratio\": 2.5,\n  \"psnr\": null,\n"
      "  \"ok\": true,\n  \"none\": null,\n  \"time\": {\n    \"total\": 1\n  },\n"
      "  \"rows\": [\n    {\n      \"size\": 8\n    },\n    3\n  ],\n"
      "  \"stats\": {\"a\":1},\n  \"empty\": null,\n  \"open\": {\n"
      "    \"k\\\"ey\": false\n  }\n}\n";
  char *a = written(every_kind), *b = written(too_deep);
  int opens = 0, closes = 0;
  GZ_CHECK(a && !strcmp(a, expect), "every kind of value:\n%s", a ? a : "(null)");
  GZ_CHECK(b != NULL, "deep document written");
  for (const char *p = b ? b : ""; *p; p++) {
    opens += *p == '[' || *p == '{';
    closes += *p == ']' || *p == '}';
  }
  GZ_CHECK(opens == closes && opens == GZ_JSON_DEPTH,
           "too deep: balanced, %d levels (%d/%d)", GZ_JSON_DEPTH, opens, closes);
  GZ_CHECK(b && strstr(b, "null") && strstr(b, "\"after\": 2"),
           "too deep: null, then on:\n%s", b ? b : "");
  free(a);
  free(b);
  return gz_test_finish();
}
