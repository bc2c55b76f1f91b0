/*
 * The limit for the codec benchmark: jansson called from plain C, on the very same
 * messages the Swift benchmark reads (Benchmarks/messages.jsonl, one message a line).
 *
 * One "message" = json_loadb of its bytes + json_dumps of the tree (+ free + decref),
 * with the same flags JSONKit uses, so the only difference from the Swift loop is Swift.
 *
 *   codec_loop FILE [SECONDS_PER_RUN] [RUNS]
 *
 * Prints every run, then best and median; the last line is machine-readable:
 *   RESULT c-jansson best=<msg/s> median=<msg/s>
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_MESSAGES 4096

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *messages[MAX_MESSAGES];
static size_t lengths[MAX_MESSAGES];
static size_t message_count, total_bytes;

/* Same flags as JSONKit's JSON.parse / JSON.encode(format: []). */
static const size_t load_flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
static const size_t dump_flags = JSON_ENCODE_ANY | JSON_REAL_PRECISION(17) | JSON_COMPACT;

static size_t sink;

/* One pass over the whole message set. */
static void pass(void) {
    for (size_t i = 0; i < message_count; i++) {
        json_error_t error;
        json_t *value = json_loadb(messages[i], lengths[i], load_flags, &error);
        if (!value) {
            fprintf(stderr, "message %zu does not parse: %s\n", i + 1, error.text);
            exit(2);
        }
        char *dumped = json_dumps(value, dump_flags);
        sink += strlen(dumped);
        free(dumped);
        json_decref(value);
    }
}

/* Passes for `seconds`; returns messages per second. */
static double timed_run(double seconds) {
    size_t passes = 0;
    double start = now(), elapsed;
    do {
        pass();
        passes++;
        elapsed = now() - start;
    } while (elapsed < seconds);
    return (double)(passes * message_count) / elapsed;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MESSAGES.jsonl [SECONDS_PER_RUN] [RUNS]\n", argv[0]);
        return 2;
    }
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    int runs = argc > 3 ? atoi(argv[3]) : 5;
    if (runs < 1 || runs > 100 || seconds <= 0) {
        fprintf(stderr, "bad SECONDS_PER_RUN or RUNS\n");
        return 2;
    }

    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 2; }
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length;
    while ((length = getline(&line, &capacity, file)) > 0) {
        while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) length--;
        if (length == 0) continue;
        if (message_count == MAX_MESSAGES) { fprintf(stderr, "too many messages\n"); return 2; }
        messages[message_count] = malloc((size_t)length);
        memcpy(messages[message_count], line, (size_t)length);
        lengths[message_count] = (size_t)length;
        total_bytes += (size_t)length;
        message_count++;
    }
    free(line);
    fclose(file);
    if (message_count == 0) { fprintf(stderr, "no messages in %s\n", argv[1]); return 2; }

    double mean_size = (double)total_bytes / (double)message_count;
    printf("c-jansson: %zu messages (%zu bytes, mean %.0f B), %d runs x %.2f s, jansson %s\n",
           message_count, total_bytes, mean_size, runs, seconds, JANSSON_VERSION);

    timed_run(seconds / 4); /* warm-up: caches, allocator */
    double rates[100];
    for (int r = 0; r < runs; r++) {
        rates[r] = timed_run(seconds);
        printf("  run %d: %.0f msg/s\n", r + 1, rates[r]);
    }
    qsort(rates, (size_t)runs, sizeof rates[0], compare_doubles);
    double best = rates[runs - 1];
    double median = runs % 2 ? rates[runs / 2] : (rates[runs / 2 - 1] + rates[runs / 2]) / 2;
    printf("  best   %9.0f msg/s  %6.1f MB/s  (%.2f us/msg)\n", best, best * mean_size / 1e6, 1e6 / best);
    printf("  median %9.0f msg/s  %6.1f MB/s  (%.2f us/msg)\n", median, median * mean_size / 1e6, 1e6 / median);
    printf("RESULT c-jansson best=%.0f median=%.0f\n", best, median);
    return sink == 0; /* keeps the dumps observable */
}
