/* gz_device.h - run-time view of the GPU backend (internal to gzstack).
 * Built from device_cuda.cu when CUDA was compiled in, from device_none.c
 * otherwise; both answer without needing a driver. */
#ifndef GZ_DEVICE_H
#define GZ_DEVICE_H

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the CUDA kernels were compiled into this binary. */
int gz_device_built(void);

/* Number of usable CUDA devices; 0 when none, when no driver is installed,
 * or when CUDA was not built. why (may be NULL) receives a short reason. */
int gz_device_count(char *why, unsigned long whylen);

#ifdef __cplusplus
}
#endif
#endif
