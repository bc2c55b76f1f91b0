/* jansson's own cost for one body: json_loadb + json_decref of a file's bytes, from C.
 * The reference the daemon's per-page CPU is divided by (Benchmarks/pagefetch.py).
 *
 *   parse_loop FILE [RUNS]   (default 200 runs after 20 warm-up ones)
 * Prints best and median milliseconds of this process's CPU time (CLOCK_PROCESS_CPUTIME_ID,
 * as the daemon's cost is its CPU time: on a loaded machine, wall time would count the time
 * other processes ran), and a RESULT line. Flags as JSONKit parses: JSON_DECODE_ANY | JSON_ALLOW_NUL.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [RUNS]\n", argv[0]); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 200;
    if (runs < 1) runs = 1;
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 1; }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *bytes = malloc(size);
    if (fread(bytes, 1, size, file) != (size_t)size) { perror("read"); return 1; }
    fclose(file);
    double *times = malloc(sizeof(double) * runs);
    for (int i = -20; i < runs; i++) {
        json_error_t error;
        double start = now();
        json_t *value = json_loadb(bytes, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
        if (!value) { fprintf(stderr, "parse error: %s\n", error.text); return 1; }
        json_decref(value);
        if (i >= 0) times[i] = (now() - start) * 1000;
    }
    qsort(times, runs, sizeof(double), compare);
    double median = runs % 2 ? times[runs / 2] : (times[runs / 2 - 1] + times[runs / 2]) / 2;
    printf("jansson json_loadb + json_decref of %ld bytes, CPU time: best %.3f ms, median %.3f ms (%d runs)\n", size, times[0], median, runs);
    printf("RESULT c-parse bytes=%ld best_ms=%.4f median_ms=%.4f\n", size, times[0], median);
    free(times);
    free(bytes);
    return 0;
}
