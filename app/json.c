/*
 * json.c - the app's JSON writer (json.h): what gzstack's --metrics file is
 * written with. Keeps only a stack of open levels; the caller supplies
 * the structure.
 */
#include "json.h"

#include <math.h>

static void escaped(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* The separator, the indentation and the key of the next member. */
static int member(gz_json_t *j, const char *key) {
  if (j->skip)
    return 0;
  if (!j->first[j->depth])
    fputc(',', j->f);
  j->first[j->depth] = 0;
  fprintf(j->f, "\n%*s", 2 * (j->depth + 1), "");
  if (key) {
    escaped(j->f, key);
    fputs(": ", j->f);
  }
  return 1;
}

static void open_level(gz_json_t *j, const char *key, char open, char close) {
  if (j->skip ||
      j->depth + 1 >= GZ_JSON_DEPTH) { /* too deep: null, its contents dropped */
    if (!j->skip)
      gz_json_null(j, key);
    j->skip++;
    return;
  }
  member(j, key);
  fputc(open, j->f);
  j->depth++;
  j->first[j->depth] = 1;
  j->closing[j->depth] = close;
}

void gz_json_begin(gz_json_t *j, FILE *f) {
  j->f = f;
  j->depth = 0;
  j->skip = 0;
  j->first[0] = 1;
  j->closing[0] = '}';
  fputc('{', f);
}

void gz_json_object(gz_json_t *j, const char *key) { open_level(j, key, '{', '}'); }

void gz_json_array(gz_json_t *j, const char *key) { open_level(j, key, '[', ']'); }

void gz_json_end(gz_json_t *j) {
  if (j->skip) {
    j->skip--;
    return;
  }
  if (j->depth == 0)
    return;
  j->depth--;
  fprintf(j->f, "\n%*s%c", 2 * (j->depth + 1), "", j->closing[j->depth + 1]);
}

void gz_json_end_object(gz_json_t *j) { gz_json_end(j); }

void gz_json_number(gz_json_t *j, const char *key, double v) {
  if (!member(j, key))
    return;
  if (isfinite(v))
    fprintf(j->f, "%.17g", v);
  else
    fputs("null", j->f);
}

void gz_json_string(gz_json_t *j, const char *key, const char *s) {
  if (member(j, key))
    escaped(j->f, s);
}

void gz_json_bool(gz_json_t *j, const char *key, int v) {
  if (member(j, key))
    fputs(v ? "true" : "false", j->f);
}

void gz_json_null(gz_json_t *j, const char *key) {
  if (member(j, key))
    fputs("null", j->f);
}

void gz_json_raw(gz_json_t *j, const char *key, const char *json) {
  if (member(j, key))
    fputs(json && *json ? json : "null", j->f);
}

void gz_json_finish(gz_json_t *j) {
  j->skip = 0;
  while (j->depth > 0)
    gz_json_end(j);
  fputs("\n}\n", j->f);
}
