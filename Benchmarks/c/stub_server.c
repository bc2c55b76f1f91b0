/*
 * A stand-in JSON-RPC server for calibrating the stdio harnesses (spawn, pipeline):
 * the least a server can do. Reads LSP-framed messages from stdin; answers every
 * request: "initialize" with a small result, anything else with -32601, as datasourced
 * does; ignores notifications. jansson parses and dumps, like the daemon; output is
 * buffered and written when the input read so far is drained. Exits at end of input.
 *
 * What it shows: the harness's own floor (spawn) and ceiling (pipeline) on this machine,
 * so a daemon figure can be read against what the pipes + client + jansson allow.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <errno.h>

static char *in, *out;
static size_t in_len, in_cap, out_len, out_cap;

static void reserve(char **buffer, size_t *capacity, size_t needed) {
    if (needed <= *capacity) return;
    size_t grown = *capacity ? *capacity : 65536;
    while (grown < needed) grown *= 2;
    *buffer = realloc(*buffer, grown);
    if (!*buffer) abort();
    *capacity = grown;
}

static void flush_out(void) {
    size_t offset = 0;
    while (offset < out_len) {
        ssize_t n = write(1, out + offset, out_len - offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) exit(1);
        offset += (size_t)n;
    }
    out_len = 0;
}

static void answer(const char *body, size_t length) {
    json_t *message = json_loadb(body, length, JSON_DECODE_ANY, NULL);
    json_t *id = message ? json_object_get(message, "id") : NULL;
    const char *method = message ? json_string_value(json_object_get(message, "method")) : NULL;
    if (message && id && method) {
        json_t *response = json_object();
        json_object_set_new(response, "jsonrpc", json_string("2.0"));
        json_object_set(response, "id", id);
        if (strcmp(method, "initialize") == 0) {
            json_t *result = json_object();
            json_object_set_new(result, "protocolVersion", json_string("1.0"));
            json_object_set_new(response, "result", result);
        } else {
            json_t *error = json_object();
            json_object_set_new(error, "code", json_integer(-32601));
            json_object_set_new(error, "message", json_string("Method not found"));
            json_object_set_new(response, "error", error);
        }
        char *dumped = json_dumps(response, JSON_COMPACT);
        size_t dumped_len = strlen(dumped);
        char header[64];
        int header_len = snprintf(header, sizeof header, "Content-Length: %zu\r\n\r\n", dumped_len);
        reserve(&out, &out_cap, out_len + (size_t)header_len + dumped_len);
        memcpy(out + out_len, header, (size_t)header_len);
        memcpy(out + out_len + header_len, dumped, dumped_len);
        out_len += (size_t)header_len + dumped_len;
        free(dumped);
        json_decref(response);
    }
    json_decref(message);
}

int main(void) {
    size_t consumed = 0;
    for (;;) {
        reserve(&in, &in_cap, in_len + 65536);
        ssize_t n = read(0, in + in_len, 65536);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        in_len += (size_t)n;
        for (;;) {
            char *start = in + consumed;
            size_t available = in_len - consumed;
            char *end = memmem(start, available, "\r\n\r\n", 4);
            if (!end) break;
            char *field = memmem(start, (size_t)(end - start), "Content-Length:", 15);
            if (!field) { fprintf(stderr, "stub: no Content-Length\n"); return 2; }
            size_t length = strtoul(field + 15, NULL, 10);
            size_t header = (size_t)(end - start) + 4;
            if (available < header + length) break;
            answer(start + header, length);
            consumed += header + length;
        }
        memmove(in, in + consumed, in_len - consumed);
        in_len -= consumed;
        consumed = 0;
        flush_out();
    }
    flush_out();
    return 0;
}
