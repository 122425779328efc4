/*
 * env.c - typed, validated getters of the GZCOLL_* environment variables
 * (see gz_env.h). Which variables exist and what they mean is documented
 * where they are used: ctx.c (library), pmpi/env_config.c (PMPI).
 */
#include "gz_env.h"

#include "coll_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *gz_env_get(const char *name) {
  const char *s = getenv(name);
  return s && *s ? s : NULL;
}

/* Past the blanks at s. */
static const char *skip_blanks(const char *s) {
  while (isspace((unsigned char)*s))
    s++;
  return s;
}

int gz_env_double(const char *name, double *value) {
  const char *s = gz_env_get(name);
  char *end;
  double v;
  if (!s)
    return GZ_ENV_UNSET;
  v = strtod(s, &end);
  if (end == s || *skip_blanks(end) || !(v > 0) || !isfinite(v))
    return GZ_ENV_BAD;
  *value = v;
  return GZ_ENV_SET;
}

int gz_env_size(const char *name, size_t *value) {
  const char *s = gz_env_get(name);
  char *end;
  unsigned long long v;
  double mult = 1;
  if (!s)
    return GZ_ENV_UNSET;
  s = skip_blanks(s);
  if (!isdigit((unsigned char)*s))
    return GZ_ENV_BAD;
  v = strtoull(s, &end, 10);
  if (*end == 'k' || *end == 'K')
    mult = 1024.0, end++;
  else if (*end == 'm' || *end == 'M')
    mult = 1024.0 * 1024.0, end++;
  else if (*end == 'g' || *end == 'G')
    mult = 1024.0 * 1024.0 * 1024.0, end++;
  if (*skip_blanks(end) || (double)v * mult > 1e18)
    return GZ_ENV_BAD;
  *value = (size_t)((double)v * mult);
  return GZ_ENV_SET;
}

int gz_env_bool(const char *name, int *value) {
  static const char *const words[] = {"0",   "1",     "off",  "on", "no",
                                      "yes", "false", "true", NULL};
  int index, st = gz_env_enum(name, words, &index);
  if (st == GZ_ENV_SET)
    *value = index % 2;
  return st;
}

int gz_env_enum(const char *name, const char *const *names, int *index) {
  const char *s = gz_env_get(name);
  if (!s)
    return GZ_ENV_UNSET;
  for (int i = 0; names[i]; i++) {
    if (strcasecmp(s, names[i]) == 0) {
      *index = i;
      return GZ_ENV_SET;
    }
  }
  return GZ_ENV_BAD;
}

int gz_env_algo(const char *name, gz_env_algo_fn apply, void *arg) {
  const char *p = gz_env_get(name);
  char item[64];
  const char *algo;
  if (!p)
    return GZ_ENV_UNSET;
  if (!strchr(p, '=')) {
    if (!(algo = gz_algo_canon(p)) || (apply && !apply(arg, -1, algo)))
      return GZ_ENV_BAD;
    return GZ_ENV_SET;
  }
  while (*p) {
    const char *end = strchr(p, ','), *eq;
    size_t len = end ? (size_t)(end - p) : strlen(p);
    gz_coll_t coll;
    if (len == 0 || len >= sizeof item)
      return GZ_ENV_BAD;
    memcpy(item, p, len);
    item[len] = '\0';
    eq = strchr(item, '=');
    if (!eq || !gz_coll_lookup(item, (size_t)(eq - item), &coll) ||
        !(algo = gz_algo_canon(eq + 1)) || (apply && !apply(arg, (int)coll, algo)))
      return GZ_ENV_BAD;
    p += len;
    if (*p == ',')
      p++;
  }
  return GZ_ENV_SET;
}
