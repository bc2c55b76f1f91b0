#define _GNU_SOURCE
#include "CSystemShims.h"
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <spawn.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int cshims_pipe_cloexec(int descriptors[2]) {
    return pipe2(descriptors, O_CLOEXEC);
}

int cshims_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
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

ssize_t cshims_write_without_waiting(int descriptor, const void *bytes, size_t count) {
    struct iovec piece = {(void *)bytes, count};
    return pwritev2(descriptor, &piece, 1, -1, RWF_NOWAIT);
}
