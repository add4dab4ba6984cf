/* REL-7 from C: clarion_close while other threads are inside clarion_call.
 * Two threads block in `wait` (30 s), two loop on `list_pending`; the main
 * thread closes the handle under them. Every blocked wait must return 503
 * at once, every later call 503, and nothing may touch freed memory: the
 * test runs this program under valgrind (tests/it/doors_ffi_consumers.rs).
 * Exits non-zero on the first surprise. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clarion.h"

#define SYSTEM "{\"kind\":\"system\"}"

static clarion_t *db;
static char pending_id[64];

static int starts_with(const char *text, const char *prefix) {
    return text != NULL && strncmp(text, prefix, strlen(prefix)) == 0;
}

static char *call(const char *request) {
    char *reply = clarion_call(db, request);
    if (reply == NULL) {
        fprintf(stderr, "FAIL NULL reply to %s\n", request);
        exit(1);
    }
    return reply;
}

static void setup(void) {
    const char *requests[] = {
        "{\"op\":\"upsert_workspace\",\"principal\":" SYSTEM ",\"args\":{\"id\":\"w\",\"owner_id\":\"alice\"}}",
        "{\"op\":\"upsert_task\",\"principal\":" SYSTEM ",\"args\":{\"id\":\"t\",\"workspace_id\":\"w\"}}",
        "{\"op\":\"upsert_session\",\"principal\":" SYSTEM ",\"args\":{\"id\":\"s\",\"task_id\":\"t\"}}",
    };
    for (size_t i = 0; i < sizeof requests / sizeof *requests; i++) {
        char *reply = call(requests[i]);
        if (!starts_with(reply, "{\"status\":200,")) {
            fprintf(stderr, "FAIL setup: %s\n", reply);
            exit(1);
        }
        clarion_string_free(reply);
    }
    char *asked = call("{\"op\":\"ask\",\"principal\":" SYSTEM ",\"args\":{\"session_id\":\"s\",\"questions\":"
                       "[{\"prompt\":\"Close?\",\"options\":[{\"label\":\"Yes\",\"description\":\"y\"},"
                       "{\"label\":\"No\",\"description\":\"n\"}]}]}}");
    const char *at = strstr(asked, "\"pending_id\":\"");
    if (at == NULL) {
        fprintf(stderr, "FAIL ask: %s\n", asked);
        exit(1);
    }
    at += strlen("\"pending_id\":\"");
    size_t length = strcspn(at, "\"");
    if (length >= sizeof pending_id) {
        exit(1);
    }
    memcpy(pending_id, at, length);
    clarion_string_free(asked);
}

static void *waiter(void *unused) {
    (void)unused;
    char request[256];
    snprintf(request, sizeof request,
             "{\"op\":\"wait\",\"principal\":" SYSTEM ",\"args\":{\"pending_id\":\"%s\",\"timeout_ms\":30000}}",
             pending_id);
    char *reply = call(request);
    int closed = starts_with(reply, "{\"status\":503,\"body\":{\"error\":\"handle closed\"},\"code\":\"handle_closed\",\"field\":\"\"}");
    if (!closed) {
        fprintf(stderr, "FAIL wait ended with %s\n", reply);
    }
    clarion_string_free(reply);
    return closed ? NULL : (void *)1;
}

static void *lister(void *unused) {
    (void)unused;
    for (;;) {
        char *reply = call("{\"op\":\"list_pending\",\"principal\":{\"kind\":\"user\",\"user_id\":\"alice\"},\"args\":{}}");
        int ok = starts_with(reply, "{\"status\":200,");
        int closed = starts_with(reply, "{\"status\":503,");
        clarion_string_free(reply);
        if (closed) {
            return NULL;
        }
        if (!ok) {
            return (void *)1;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DATABASE_URL\n", argv[0]);
        return 2;
    }
    char config[1024];
    snprintf(config, sizeof config, "{\"database_url\":\"%s\",\"pool_size\":4}", argv[1]);
    db = clarion_open(config);
    if (db == NULL) {
        fprintf(stderr, "FAIL open: %s\n", clarion_last_error());
        return 1;
    }
    setup();
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        pthread_create(&threads[i], NULL, i < 2 ? waiter : lister, NULL);
    }
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    time_t closed_at = time(NULL);
    clarion_close(db);
    int failures = 0;
    for (int i = 0; i < 4; i++) {
        void *result = NULL;
        pthread_join(threads[i], &result);
        failures += result != NULL;
    }
    if (time(NULL) - closed_at > 10) {
        fprintf(stderr, "FAIL the blocked waits did not end at once\n");
        failures++;
    }
    char *after = clarion_call(db, "{\"op\":\"summary\",\"principal\":" SYSTEM ",\"args\":{}}");
    if (!starts_with(after, "{\"status\":503,")) {
        fprintf(stderr, "FAIL a call after close: %s\n", after ? after : "(NULL)");
        failures++;
    }
    clarion_string_free(after);
    clarion_close(db); /* twice: ignored */
    printf("%s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
