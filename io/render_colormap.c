/* render_colormap.c - the colour maps of field renders: each is a table of
 * anchor colours at equal steps of t in [0, 1], interpolated linearly in RGB
 * between neighbouring anchors (see gz_render.h for the maps). */
#include "gz_render.h"

#include <math.h>

typedef struct cmap_table {
  int n; /* anchors, >= 2, at t = i / (n - 1) */
  const unsigned char (*rgb)[3];
} cmap_table_t;

/* Viridis sampled at t = 0, 1/8, ..., 1 (the published 9-colour viridis
 * palette: #440154 #472D7B #3B528B #2C728E #21918C #28AE80 #5EC962 #ADDC30
 * #FDE725). */
static const unsigned char viridis_anchors[9][3] = {
    {68, 1, 84},    {71, 45, 123}, {59, 82, 139},  {44, 114, 142}, {33, 145, 140},
    {40, 174, 128}, {94, 201, 98}, {173, 220, 48}, {253, 231, 37}};

/* Blue - white - red, symmetric about t = 0.5. */
static const unsigned char diverging_anchors[3][3] = {
    {59, 76, 192}, {255, 255, 255}, {180, 4, 38}};

static const unsigned char gray_anchors[2][3] = {{0, 0, 0}, {255, 255, 255}};

static cmap_table_t cmap_table(gz_cmap_t cmap) {
  cmap_table_t t;
  switch (cmap) {
  case GZ_CMAP_DIVERGING:
    t.n = 3;
    t.rgb = diverging_anchors;
    break;
  case GZ_CMAP_GRAY:
    t.n = 2;
    t.rgb = gray_anchors;
    break;
  case GZ_CMAP_AUTO:
  case GZ_CMAP_VIRIDIS:
  default:
    t.n = 9;
    t.rgb = viridis_anchors;
    break;
  }
  return t;
}

void gz_cmap_rgb(gz_cmap_t cmap, double t, unsigned char rgb[3]) {
  cmap_table_t tab = cmap_table(cmap);
  double pos, frac;
  int i, k;
  if (isnan(t)) {
    rgb[0] = rgb[1] = rgb[2] = GZ_RENDER_MISSING;
    return;
  }
  if (t < 0.0)
    t = 0.0;
  if (t > 1.0)
    t = 1.0;
  pos = t * (double)(tab.n - 1);
  i = (int)pos;
  if (i >= tab.n - 1)
    i = tab.n - 2;
  frac = pos - (double)i;
  for (k = 0; k < 3; k++) {
    double a = tab.rgb[i][k], b = tab.rgb[i + 1][k];
    rgb[k] = (unsigned char)lround(a + (b - a) * frac);
  }
}
