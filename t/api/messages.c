/* SPDX-License-Identifier: Apache-2.0 */
/* Error messages: bkGetLastErrorMessage per thread, kept across
 * successful calls, and the process-wide message callback. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* What our callback saw. */
struct seen {
    int calls;
    BkResult result;
    char message[512];
    void *user;
};

static struct seen seen;

static void record(BkResult result, const char *message, void *user)
{
    seen.calls++;
    seen.result = result;
    seen.user = user;
    snprintf(seen.message, sizeof seen.message, "%s", message ? message : "");
}

/* A call that fails in the core whatever the device: bkGetQueue with no
 * output pointer. */
static BkResult fail_on_purpose(void)
{
    return bkGetQueue(BK_NULL_HANDLE, 0, NULL);
}

static void test_callback(void)
{
    int token;
    memset(&seen, 0, sizeof seen);
    bkSetMessageCallback(record, &token);
    BkResult r = fail_on_purpose();
    tap_ok(seen.calls == 1, "the callback is called once per error (%d)", seen.calls);
    tap_ok(seen.result == r && r == BK_ERROR_INVALID_ARGUMENT,
           "the callback receives the result (%s)", bkResultString(seen.result));
    tap_ok(seen.user == &token, "the callback receives its pUserData");
    tap_ok(strstr(seen.message, "pQueue") != NULL, "the callback's message names pQueue: \"%s\"",
           seen.message);
    tap_is_str(seen.message, bkGetLastErrorMessage(),
               "the callback's message is bkGetLastErrorMessage()");

    uint32_t count = 0;
    int before = seen.calls;
    tap_ok(bkEnumerateDevices(&count, NULL) == BK_SUCCESS && seen.calls == before,
           "a successful call does not call the callback");

    bkSetMessageCallback(NULL, &token);
    before = seen.calls;
    fail_on_purpose();
    tap_ok(seen.calls == before, "bkSetMessageCallback(NULL) stops the calls");
}

static void test_last_message(void)
{
    fail_on_purpose();
    char first[512];
    snprintf(first, sizeof first, "%s", bkGetLastErrorMessage());
    tap_ok(strstr(first, "bkGetQueue") && strstr(first, "pQueue"),
           "the message names the function and the parameter: \"%s\"", first);

    uint32_t count = 0;
    bkEnumerateDevices(&count, NULL);
    tap_is_str(bkGetLastErrorMessage(), first, "a successful call keeps the last message");

    bkEnumerateDevices(NULL, NULL);
    tap_ok(strstr(bkGetLastErrorMessage(), "pDeviceCount") != NULL,
           "the next failure replaces it: \"%s\"", bkGetLastErrorMessage());
}

/* Another thread has its own last message, and the callback runs in the
 * failing thread. */
struct thread_result {
    char before[512], after[512];
    pthread_t callback_thread;
};

static pthread_t callback_thread;

static void note_thread(BkResult result, const char *message, void *user)
{
    (void)result, (void)message, (void)user;
    callback_thread = pthread_self();
}

static void *other_thread(void *arg)
{
    struct thread_result *t = arg;
    snprintf(t->before, sizeof t->before, "%s", bkGetLastErrorMessage());
    bkCreateContext(NULL, NULL, NULL);
    snprintf(t->after, sizeof t->after, "%s", bkGetLastErrorMessage());
    t->callback_thread = callback_thread;
    return NULL;
}

static void test_threads(void)
{
    fail_on_purpose();
    char mine[512];
    snprintf(mine, sizeof mine, "%s", bkGetLastErrorMessage());

    struct thread_result t;
    memset(&t, 0, sizeof t);
    bkSetMessageCallback(note_thread, NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, other_thread, &t) != 0)
        tap_bail("pthread_create failed");
    pthread_join(th, NULL);
    bkSetMessageCallback(NULL, NULL);

    tap_ok(t.before[0] == '\0', "a new thread starts with an empty message (\"%s\")", t.before);
    tap_ok(strstr(t.after, "pContext") != NULL, "the thread sees its own error: \"%s\"",
           t.after);
    tap_ok(pthread_equal(t.callback_thread, th), "the callback runs in the failing thread");
    tap_is_str(bkGetLastErrorMessage(), mine, "this thread's message is unchanged");
}

int main(void)
{
    test_callback();
    test_last_message();
    test_threads();
    return tap_done();
}
