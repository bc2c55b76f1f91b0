// GNU and XSI calls the Swift Glibc module leaves out, behind plain C functions.
#ifndef CSYSTEMSHIMS_H
#define CSYSTEMSHIMS_H

#include <pthread.h>
#include <spawn.h>
#include <sys/types.h>

// Both ends of a new pipe, created close-on-exec in one step (pipe2 with O_CLOEXEC).
int cshims_pipe_cloexec(int descriptors[2]);

// Has a spawned child start in `path` (posix_spawn_file_actions_addchdir_np, glibc 2.29).
int cshims_spawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path);

// Names the calling thread (pthread_setname_np); the kernel keeps 15 bytes.
int cshims_name_current_thread(const char *name);

// Names another thread (its creator does, so the name is there before it runs).
int cshims_name_thread(pthread_t thread, const char *name);

// Hands malloc's free pages back to the kernel (malloc_trim); 1 if any were released.
int cshims_trim_malloc(void);

// Writes what can be written without waiting (pwritev2 with RWF_NOWAIT at the current
// position): the count written, or -1 with errno (EAGAIN: a full pipe; EOPNOTSUPP: a
// descriptor that cannot say, such as a regular file).
ssize_t cshims_write_without_waiting(int descriptor, const void *bytes, size_t count);

#endif
