/* json.h - the one JSON writer of the app (metrics files; gzbench's JSON
 * can use it too): nested objects and arrays, numbers (non-finite as
 * null), strings and keys (escaped), booleans, null and already formatted
 * JSON. Pretty-printed, two spaces a level. At most GZ_JSON_DEPTH - 1
 * levels below the top: a deeper object or array is written as null and
 * what goes into it is dropped, so the document stays valid. */
#ifndef GZ_JSON_H
#define GZ_JSON_H

#include <stdio.h>

#define GZ_JSON_DEPTH 8

typedef struct gz_json {
  FILE *f;
  int depth;
  int first[GZ_JSON_DEPTH];    /* nothing written yet at this level */
  char closing[GZ_JSON_DEPTH]; /* '}' or ']' */
  int skip;                    /* levels opened too deep (written as null) */
} gz_json_t;

/* Starts the top-level object. */
void gz_json_begin(gz_json_t *j, FILE *f);
/* Members: key names the member inside an object; NULL inside an array. */
void gz_json_object(gz_json_t *j, const char *key);
void gz_json_array(gz_json_t *j, const char *key);
void gz_json_end(gz_json_t *j);        /* closes the innermost object or array */
void gz_json_end_object(gz_json_t *j); /* the same, for readability */
void gz_json_number(gz_json_t *j, const char *key, double v);
void gz_json_string(gz_json_t *j, const char *key, const char *s);
void gz_json_bool(gz_json_t *j, const char *key, int v);
void gz_json_null(gz_json_t *j, const char *key);
/* An already formatted JSON value (e.g. gz_error_stats_json), as is; NULL
 * or "" writes null. */
void gz_json_raw(gz_json_t *j, const char *key, const char *json);
/* Closes everything still open and ends the line. */
void gz_json_finish(gz_json_t *j);

#endif
