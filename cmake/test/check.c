/* SPDX-License-Identifier: Apache-2.0 */
/* Built by cmake/test/CMakeLists.txt against the installed libbk. */
#include <bk/bk.h>
#include <stdio.h>

int main(void)
{
    if (bkGetVersion() != BK_HEADER_VERSION) {
        fprintf(stderr, "header and library versions differ\n");
        return 1;
    }
    BkContextCreateInfo info = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                                 .deviceType = BK_DEVICE_TYPE_HOST };
    BkContext ctx;
    if (bkCreateContext(&info, NULL, &ctx) != BK_SUCCESS) {
        fprintf(stderr, "bkCreateContext: %s\n", bkGetLastErrorMessage());
        return 1;
    }
    bkDestroyContext(ctx);
    puts("libbk found through CMake: ok");
    return 0;
}
