#define _GNU_SOURCE
#include "CSystemShims.h"
#include <fcntl.h>
#include <locale.h>
#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int cshims_pipe_cloexec(int descriptors[2]) {
    return pipe2(descriptors, O_CLOEXEC);
}

int cshims_name_thread(pthread_t thread, const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = 0;
    return pthread_setname_np(thread, truncated);
}

int cshims_name_current_thread(const char *name) {
    return cshims_name_thread(pthread_self(), name);
}

int cshims_trim_malloc(void) {
    return malloc_trim(0);
}

int cshims_parse_http_date(const char *text, long long *seconds) {
    struct tm fields;
    memset(&fields, 0, sizeof fields);
    // The C locale's day and month names, which are HTTP's.
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t previous = c ? uselocale(c) : (locale_t)0;
    const char *end = strptime(text, "%a, %d %b %Y %H:%M:%S GMT", &fields);
    if (c) { uselocale(previous); freelocale(c); }
    if (end == NULL || *end != 0) return 0;
    *seconds = (long long)timegm(&fields);
    return 1;
}
