/* SPDX-License-Identifier: Apache-2.0 */
/* The host BLAS called directly (see blas_direct.h). */
#include "config.h"

#include "blas_direct.h"

#include <stdio.h>

#ifdef BK_HAVE_BLAS
#include <cblas.h>
#include <dlfcn.h>

bool blas_direct_available(char *out, size_t size)
{
    Dl_info info;
    const bool named = dladdr((void *)(uintptr_t)cblas_sgemm, &info) && info.dli_fname;
    snprintf(out, size, "%s", named ? info.dli_fname : "the CBLAS libbk was built with");
    return true;
}

bool blas_direct_takes(BkDataType dtype)
{
    return dtype == BK_DATA_TYPE_F32 || dtype == BK_DATA_TYPE_F64;
}

void blas_direct_gemm(BkDataType dtype, int64_t m, int64_t n, int64_t k, void *d, const void *a,
                      const void *b)
{
    if (dtype == BK_DATA_TYPE_F64)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0, a,
                    (int)k, b, (int)k, 0.0, d, (int)n);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, a,
                    (int)k, b, (int)k, 0.0f, d, (int)n);
}

#else

bool blas_direct_available(char *out, size_t size)
{
    snprintf(out, size, "libbk was built without a BLAS");
    return false;
}

bool blas_direct_takes(BkDataType dtype)
{
    (void)dtype;
    return false;
}

void blas_direct_gemm(BkDataType dtype, int64_t m, int64_t n, int64_t k, void *d, const void *a,
                      const void *b)
{
    (void)dtype, (void)m, (void)n, (void)k, (void)d, (void)a, (void)b;
}

#endif
