/* app.h - declarations shared by the gzstack and gzbench programs. Only code
 * under app/ may decide to stop the job. */
#ifndef GZ_APP_H
#define GZ_APP_H

#include <stdio.h>

/* `--version` text. */
void gz_app_print_version(FILE *out, const char *program);

#endif
