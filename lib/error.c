/* SPDX-License-Identifier: Apache-2.0 */
/* Error reporting: the per-thread last message, the process-wide message
 * callback, and names for results and data types. */
#include "bk_internal.h"

#include <pthread.h>
#include <stdio.h>

#define BK_MESSAGE_SIZE 512

static _Thread_local char last_message[BK_MESSAGE_SIZE];

static pthread_mutex_t callback_lock = PTHREAD_MUTEX_INITIALIZER;
static PFN_bkMessageCallback callback_fn;
static void *callback_user;

/* Tentative calls (bk_error_tentative_begin/end) on this thread, and the
 * message from before the outermost one. */
static _Thread_local unsigned tentative_depth;
static _Thread_local char tentative_saved[BK_MESSAGE_SIZE];

static void send_to_callback(BkResult result)
{
    /* Read the pair under the lock so a concurrent bkSetMessageCallback
     * never hands a callback someone else's user data. */
    pthread_mutex_lock(&callback_lock);
    PFN_bkMessageCallback fn = callback_fn;
    void *user = callback_user;
    pthread_mutex_unlock(&callback_lock);
    if (fn)
        fn(result, last_message, user);
}

BkResult bk_error(BkResult result, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    if (tentative_depth == 0)
        send_to_callback(result);
    return result;
}

void bk_error_tentative_begin(void)
{
    if (tentative_depth++ == 0)
        snprintf(tentative_saved, sizeof tentative_saved, "%s", last_message);
}

BkResult bk_error_tentative_end(BkResult result, bool discard)
{
    if (tentative_depth == 0 || --tentative_depth > 0)
        return result;
    if (discard)
        snprintf(last_message, sizeof last_message, "%s", tentative_saved);
    else if (result < 0)
        send_to_callback(result);
    return result;
}

BK_API const char *bkGetLastErrorMessage(void)
{
    return last_message;
}

BK_API void bkSetMessageCallback(PFN_bkMessageCallback pfnCallback, void *pUserData)
{
    pthread_mutex_lock(&callback_lock);
    callback_fn = pfnCallback;
    callback_user = pfnCallback ? pUserData : NULL;
    pthread_mutex_unlock(&callback_lock);
}

BK_API uint32_t bkGetVersion(void)
{
    return BK_HEADER_VERSION;
}

static const struct { BkResult code; const char *name; } result_names[] = {
    { BK_SUCCESS, "BK_SUCCESS" },
    { BK_INCOMPLETE, "BK_INCOMPLETE" },
    { BK_ERROR_INVALID_ARGUMENT, "BK_ERROR_INVALID_ARGUMENT" },
    { BK_ERROR_UNSUPPORTED, "BK_ERROR_UNSUPPORTED" },
    { BK_ERROR_MISALIGNED_OPERAND, "BK_ERROR_MISALIGNED_OPERAND" },
    { BK_ERROR_WORKSPACE_TOO_SMALL, "BK_ERROR_WORKSPACE_TOO_SMALL" },
    { BK_ERROR_BUFFER_TOO_SMALL, "BK_ERROR_BUFFER_TOO_SMALL" },
    { BK_ERROR_OUT_OF_HOST_MEMORY, "BK_ERROR_OUT_OF_HOST_MEMORY" },
    { BK_ERROR_OUT_OF_DEVICE_MEMORY, "BK_ERROR_OUT_OF_DEVICE_MEMORY" },
    { BK_ERROR_DRIVER_NOT_FOUND, "BK_ERROR_DRIVER_NOT_FOUND" },
    { BK_ERROR_NO_DEVICE, "BK_ERROR_NO_DEVICE" },
    { BK_ERROR_DEVICE_LOST, "BK_ERROR_DEVICE_LOST" },
    { BK_ERROR_MODULE_LOAD_FAILED, "BK_ERROR_MODULE_LOAD_FAILED" },
    { BK_ERROR_INCOMPATIBLE_VERSION, "BK_ERROR_INCOMPATIBLE_VERSION" },
    { BK_ERROR_INVALID_STATE, "BK_ERROR_INVALID_STATE" },
};

BK_API const char *bkResultString(BkResult result)
{
    for (size_t i = 0; i < sizeof result_names / sizeof result_names[0]; i++)
        if (result_names[i].code == result)
            return result_names[i].name;
    return "BK_RESULT_UNKNOWN";
}

static const struct { const char *name; size_t size; } data_types[] = {
    [BK_DATA_TYPE_UNDEFINED] = { "BK_DATA_TYPE_UNDEFINED", 0 },
    [BK_DATA_TYPE_F32] = { "BK_DATA_TYPE_F32", 4 },
    [BK_DATA_TYPE_F16] = { "BK_DATA_TYPE_F16", 2 },
    [BK_DATA_TYPE_BF16] = { "BK_DATA_TYPE_BF16", 2 },
    [BK_DATA_TYPE_F64] = { "BK_DATA_TYPE_F64", 8 },
    [BK_DATA_TYPE_I32] = { "BK_DATA_TYPE_I32", 4 },
    [BK_DATA_TYPE_U16] = { "BK_DATA_TYPE_U16", 2 },
    [BK_DATA_TYPE_U8] = { "BK_DATA_TYPE_U8", 1 },
    [BK_DATA_TYPE_I8] = { "BK_DATA_TYPE_I8", 1 },
    [BK_DATA_TYPE_U32] = { "BK_DATA_TYPE_U32", 4 },
    [BK_DATA_TYPE_TF32] = { "BK_DATA_TYPE_TF32", 0 }, /* a compute type: no tensor has it */
};

static bool known_type(BkDataType type)
{
    return (unsigned)type < sizeof data_types / sizeof data_types[0];
}

const char *bk_data_type_name(BkDataType type)
{
    return known_type(type) ? data_types[type].name : "an unknown BkDataType";
}

size_t bk_data_type_size(BkDataType type)
{
    return known_type(type) ? data_types[type].size : 0;
}
