/* io_test_util.h - helpers shared by the io tests: a rich sample meta and
 * data, field-by-field meta comparison, scratch folders and file checks. */
#ifndef IO_TEST_UTIL_H
#define IO_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gz_io.h"
#include "gz_test.h"

/* A 5x6x7 (time, lat, lon) meta: coordinates for time and lat (lon has
 * none), units, long_name, fill -999, text and numeric attributes (one in
 * the data's type), and text/number global attributes. var as given. */
void iot_make_meta(gz_meta_t *m, gz_dtype_t dtype, const char *var);

/* gz_meta_count(m) values of m->dtype: seeded normal values around 280,
 * with fill values and NaNs sprinkled in. malloc'ed. */
void *iot_make_data(const gz_meta_t *m, uint64_t seed);

/* Checks every field of b against a (label names the case in failures).
 * Attributes are matched by name (their order may differ by format).
 * flags: IOT_NO_VAR skips the variable name. Returns failures seen. */
#define IOT_NO_VAR 1
int iot_check_meta(const gz_meta_t *a, const gz_meta_t *b, int flags, const char *label);

/* Value i of a dtype array as double. */
double iot_value(const void *data, gz_dtype_t dtype, size_t i);

/* Values equal, NaN equal to NaN. */
int iot_same(double x, double y);

/* Count of differing values between a (dtype da) and b (dtype db) over n,
 * comparing after converting a to db. */
size_t iot_count_diff(const void *a, gz_dtype_t da, const void *b, gz_dtype_t db,
                      size_t n);

/* A fresh folder under /tmp, the same on every rank of comm (rank 0 makes
 * it). Static string. */
const char *iot_scratch_dir(MPI_Comm comm);
/* Remove every file in dir and dir itself (rank 0 of comm, after a barrier). */
void iot_scratch_remove(const char *dir, MPI_Comm comm);
/* Number of entries in dir whose name contains ".tmp-". */
int iot_temp_files(const char *dir);

/* Write size bytes to path; 0 on success. */
int iot_write_file(const char *path, const void *buf, size_t size);

/* 1 if hay contains needle. */
int iot_contains(const char *hay, const char *needle);

#endif
