/* SPDX-License-Identifier: Apache-2.0 */
/* Version macros against bkGetVersion and the package version, and
 * bkResultString for every BkResult and for unknown values. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "test_util.h"

static const BkResult all_results[] = {
    BK_SUCCESS, BK_INCOMPLETE, BK_ERROR_INVALID_ARGUMENT, BK_ERROR_UNSUPPORTED,
    BK_ERROR_MISALIGNED_OPERAND, BK_ERROR_WORKSPACE_TOO_SMALL, BK_ERROR_BUFFER_TOO_SMALL,
    BK_ERROR_OUT_OF_HOST_MEMORY, BK_ERROR_OUT_OF_DEVICE_MEMORY, BK_ERROR_DRIVER_NOT_FOUND,
    BK_ERROR_NO_DEVICE, BK_ERROR_DEVICE_LOST, BK_ERROR_MODULE_LOAD_FAILED,
    BK_ERROR_INCOMPATIBLE_VERSION, BK_ERROR_INVALID_STATE,
};
static const char *const all_names[] = {
    "BK_SUCCESS", "BK_INCOMPLETE", "BK_ERROR_INVALID_ARGUMENT", "BK_ERROR_UNSUPPORTED",
    "BK_ERROR_MISALIGNED_OPERAND", "BK_ERROR_WORKSPACE_TOO_SMALL", "BK_ERROR_BUFFER_TOO_SMALL",
    "BK_ERROR_OUT_OF_HOST_MEMORY", "BK_ERROR_OUT_OF_DEVICE_MEMORY", "BK_ERROR_DRIVER_NOT_FOUND",
    "BK_ERROR_NO_DEVICE", "BK_ERROR_DEVICE_LOST", "BK_ERROR_MODULE_LOAD_FAILED",
    "BK_ERROR_INCOMPATIBLE_VERSION", "BK_ERROR_INVALID_STATE",
};
#define RESULT_COUNT (sizeof all_results / sizeof all_results[0])

static void test_version(void)
{
    uint32_t v = bkGetVersion();
    tap_is_int(v, BK_HEADER_VERSION, "bkGetVersion() == BK_HEADER_VERSION");
    tap_is_int(BK_VERSION_GET_MAJOR(v), BK_VERSION_MAJOR, "major of bkGetVersion()");
    tap_is_int(BK_VERSION_GET_MINOR(v), BK_VERSION_MINOR, "minor of bkGetVersion()");
    tap_is_int(BK_VERSION_GET_PATCH(v), BK_VERSION_PATCH, "patch of bkGetVersion()");

    /* The header's version is the package's (configure.ac AC_INIT). */
    char text[64];
    snprintf(text, sizeof text, "%u.%u.%u", BK_VERSION_MAJOR, BK_VERSION_MINOR,
             BK_VERSION_PATCH);
    tap_is_str(text, PACKAGE_VERSION, "BK_VERSION_* match PACKAGE_VERSION");

    /* The packing survives the widest fields. */
    uint32_t w = BK_MAKE_VERSION(1023, 1023, 4095);
    tap_ok(BK_VERSION_GET_MAJOR(w) == 1023 && BK_VERSION_GET_MINOR(w) == 1023 &&
               BK_VERSION_GET_PATCH(w) == 4095,
           "BK_MAKE_VERSION round-trips 1023.1023.4095");
    tap_ok(BK_MAKE_VERSION(0, 2, 0) > BK_MAKE_VERSION(0, 1, 9) &&
               BK_MAKE_VERSION(1, 0, 0) > BK_MAKE_VERSION(0, 1023, 4095),
           "versions order as numbers");
}

static void test_result_strings(void)
{
    for (size_t i = 0; i < RESULT_COUNT; i++) {
        const char *s = bkResultString(all_results[i]);
        tap_is_str(s, all_names[i], "bkResultString(%d)", (int)all_results[i]);
    }
    const BkResult unknown[] = { (BkResult)-999, (BkResult)2, (BkResult)-14,
                                 BK_RESULT_MAX_ENUM };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = bkResultString(unknown[i]);
        bool named = false;
        for (size_t j = 0; s && j < RESULT_COUNT; j++)
            named = named || strcmp(s, all_names[j]) == 0;
        tap_ok(s && *s && !named, "bkResultString(%d) is \"%s\", not a known name",
               (int)unknown[i], s ? s : "(null)");
    }
}

int main(void)
{
    test_version();
    test_result_strings();
    return tap_done();
}
