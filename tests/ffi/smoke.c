/* A small C host of the clarion C ABI (WIRE-5): compiled against the
 * committed header, linked to the library, run by
 * tests/it/doors_ffi_consumers.rs on both backends. Exits non-zero on the
 * first surprise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clarion.h"

static int failures = 0;

/* Performs one request and checks the reply's status; returns the reply,
 * which the caller frees. */
static char *expect(clarion_t *db, const char *request, int status) {
    char *reply = clarion_call(db, request);
    char wanted[32];
    snprintf(wanted, sizeof wanted, "{\"status\":%d,", status);
    if (reply == NULL || strncmp(reply, wanted, strlen(wanted)) != 0) {
        fprintf(stderr, "FAIL %s\n  -> %s\n", request, reply ? reply : "(NULL)");
        failures++;
    } else {
        printf("%s\n  -> %s\n", request, reply);
    }
    return reply;
}

static void run(clarion_t *db, const char *request, int status) {
    clarion_string_free(expect(db, request, status));
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DATABASE_URL\n", argv[0]);
        return 2;
    }
    printf("abi %s\n", clarion_abi_version());

    if (clarion_open("{\"database_url\": \"mysql://nowhere\"}") != NULL ||
        clarion_last_error() == NULL) {
        fprintf(stderr, "FAIL an unknown scheme opened\n");
        failures++;
    } else {
        printf("refused: %s\n", clarion_last_error());
    }

    char config[4096];
    snprintf(config, sizeof config, "{\"database_url\": \"%s\", \"pool_size\": 4}", argv[1]);
    clarion_t *db = clarion_open(config);
    if (db == NULL) {
        fprintf(stderr, "FAIL open: %s\n", clarion_last_error());
        return 1;
    }

    const char *sys = "\"principal\":{\"kind\":\"system\"}";
    char request[2048];
    snprintf(request, sizeof request, "{\"op\":\"upsert_workspace\",%s,\"args\":{\"id\":\"w-c\",\"owner_id\":\"carol\"}}", sys);
    run(db, request, 200);
    snprintf(request, sizeof request, "{\"op\":\"upsert_task\",%s,\"args\":{\"id\":\"t-c\",\"workspace_id\":\"w-c\"}}", sys);
    run(db, request, 200);
    snprintf(request, sizeof request, "{\"op\":\"upsert_session\",%s,\"args\":{\"id\":\"s-c\",\"task_id\":\"t-c\"}}", sys);
    run(db, request, 200);
    snprintf(request, sizeof request,
             "{\"op\":\"ask\",%s,\"args\":{\"session_id\":\"s-c\",\"questions\":[{\"title\":\"Go?\",\"prompt\":\"Ship it?\","
             "\"options\":[{\"label\":\"Yes\",\"description\":\"ship\"},{\"label\":\"No\",\"description\":\"wait\"}]}]}}", sys);
    char *asked = expect(db, request, 200);
    char pending_id[256] = {0};
    const char *at = asked ? strstr(asked, "\"pending_id\":\"") : NULL;
    if (at) {
        at += strlen("\"pending_id\":\"");
        size_t n = strcspn(at, "\"");
        if (n < sizeof pending_id) memcpy(pending_id, at, n);
    }
    clarion_string_free(asked);
    if (pending_id[0] == '\0') {
        fprintf(stderr, "FAIL no pending_id\n");
        return 1;
    }

    const char *carol = "\"principal\":{\"kind\":\"user\",\"user_id\":\"carol\"}";
    snprintf(request, sizeof request, "{\"op\":\"list_pending\",%s,\"args\":{}}", carol);
    run(db, request, 200);
    snprintf(request, sizeof request,
             "{\"op\":\"resolve_bundle\",%s,\"args\":{\"pending_id\":\"%s\",\"answers\":[{\"question_id\":\"q1\",\"selected_options\":[\"q1_opt1\"]}]}}",
             carol, pending_id);
    run(db, request, 200);
    snprintf(request, sizeof request, "{\"op\":\"cancel_bundle\",%s,\"args\":{\"pending_id\":\"%s\"}}", carol, pending_id);
    run(db, request, 200); /* lost to the answer: claimed false */
    snprintf(request, sizeof request, "{\"op\":\"get_bundle\",\"principal\":{\"kind\":\"user\",\"user_id\":\"dave\"},\"args\":{\"pending_id\":\"%s\"}}", pending_id);
    run(db, request, 404);
    snprintf(request, sizeof request, "{\"op\":\"upsert_task\",%s,\"args\":{\"id\":\"t-x\"}}", carol);
    run(db, request, 403);
    run(db, "{\"op\":", 400);
    run(db, NULL, 400);
    clarion_string_free(clarion_call(NULL, "{}"));
    clarion_string_free(NULL);
    clarion_close(db);
    clarion_close(NULL);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
