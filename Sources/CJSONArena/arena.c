#define _GNU_SOURCE
#include "CJSONArena.h"
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { SLOT_SHIFT = 22, SLOT_COUNT = 256 };  // 4 MB slots, 1 GB of addresses (not of memory)
#define SLOT_SIZE ((size_t)1 << SLOT_SHIFT)
#define REGION_SIZE ((size_t)SLOT_COUNT << SLOT_SHIFT)
#define NO_SLOT (-1)

typedef struct arena arena;
struct arena {
    unsigned long long serial;
    char *next;               // where the next node is carved, in the current slot
    size_t room;              // bytes left there (0 before the first slot)
    int first_slot;           // the slot taken first: the one a scratch arena keeps between scopes
    int slots_taken;
    int out_of_slots;         // takes no more slots (none was free): malloc instead
    // Nodes alive: counted without atomics while the arena is open (only its thread sees it
    // then), handed to `live` when it is closed (nodes are then freed from any thread).
    size_t live_while_open;
    atomic_size_t live;
    arena *previous_alive, *next_alive;  // under `lock`
};

// NULL when arenas are off (the reservation failed, or DATASOURCED_JSON_ARENAS=0): every
// node then comes from malloc.
static char *region;
static arena *slot_owner[SLOT_COUNT];   // written under `lock`, read by frees of the slot's nodes
static int slot_next[SLOT_COUNT];       // the next slot of the free list
static char slot_writable[SLOT_COUNT];  // under `lock`: made readable and writable once, when first taken

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int first_free_slot = NO_SLOT;
static arena *first_alive;    // every arena not yet freed, for json_arena_is_alive
static unsigned long long last_serial;
static int advice = MADV_FREE;

static _Thread_local arena *open_arena;
// For tests: how many more slots the calling thread may take (-1: as many as are free), so
// that running out is tested without taking the slots from other threads.
static _Thread_local int slots_left_on_this_thread = -1;
// The thread's scratch arena: its first slot reused from its start each time a scope ends
// with nothing of it alive. `scratch_key` frees it when the thread ends.
static _Thread_local arena *scratch;
static pthread_key_t scratch_key;

static int slot_of(const void *node) {
    uintptr_t offset = (uintptr_t)node - (uintptr_t)region;
    return region && offset < REGION_SIZE ? (int)(offset >> SLOT_SHIFT) : NO_SLOT;
}

// Under `lock`. The region is reserved without access, so that only slots in use count
// against the system's commit limit (MAP_NORESERVE alone does not, under strict overcommit).
static int take_slot(arena *owner) {
    int slot = first_free_slot;
    if (slot == NO_SLOT || slots_left_on_this_thread == 0) return NO_SLOT;
    if (!slot_writable[slot]) {
        if (mprotect(region + ((size_t)slot << SLOT_SHIFT), SLOT_SIZE, PROT_READ | PROT_WRITE) != 0) return NO_SLOT;
        slot_writable[slot] = 1;
    }
    first_free_slot = slot_next[slot];
    slot_owner[slot] = owner;
    if (slots_left_on_this_thread > 0) slots_left_on_this_thread--;
    return slot;
}

// Under `lock`. The pages stay mapped for the next arena, but the kernel may take them back
// when it needs memory (resident size falls then, not at once). Advised before the slot is
// free again: advice given later could discard a new owner's nodes.
static void give_back_slot(int slot) {
    slot_owner[slot] = NULL;
    char *start = region + ((size_t)slot << SLOT_SHIFT);
    if (madvise(start, SLOT_SIZE, advice) != 0 && errno == EINVAL && advice == MADV_FREE) {
        advice = MADV_DONTNEED;  // a kernel before 4.5
        madvise(start, SLOT_SIZE, advice);
    }
    slot_next[slot] = first_free_slot;
    first_free_slot = slot;
}

static void destroy(arena *a) {
    pthread_mutex_lock(&lock);
    for (int slot = 0; slot < SLOT_COUNT; slot++) {
        if (slot_owner[slot] == a) give_back_slot(slot);
    }
    if (a->previous_alive) a->previous_alive->next_alive = a->next_alive; else first_alive = a->next_alive;
    if (a->next_alive) a->next_alive->previous_alive = a->previous_alive;
    pthread_mutex_unlock(&lock);
    free(a);
}

static void give_back_all_but_the_first_slot(arena *a) {
    pthread_mutex_lock(&lock);
    for (int slot = 0; slot < SLOT_COUNT; slot++) {
        if (slot_owner[slot] == a && slot != a->first_slot) give_back_slot(slot);
    }
    pthread_mutex_unlock(&lock);
    a->slots_taken = 1;
}

// 8-byte alignment is all jansson's nodes need. `size` is at most a slot, so this cannot wrap.
static inline size_t aligned(size_t size) { return (size + 7) & ~(size_t)7; }

static void start_slot(arena *a, int slot) {
    a->next = region + ((size_t)slot << SLOT_SHIFT);
    a->room = SLOT_SIZE;
}

// The current slot is full (or there is none yet): a node from a new slot, else from malloc
// (no slot free, or larger than a slot). Out of line: rare, and it takes the lock.
__attribute__((noinline)) static void *allocate_in_new_slot(arena *a, size_t size) {
    if (size > SLOT_SIZE || a->out_of_slots) return malloc(size);
    pthread_mutex_lock(&lock);
    int slot = take_slot(a);
    pthread_mutex_unlock(&lock);
    if (slot == NO_SLOT) {
        a->out_of_slots = 1;
        return malloc(size);
    }
    if (a->slots_taken++ == 0) a->first_slot = slot;
    start_slot(a, slot);
    void *node = a->next;
    a->next += aligned(size);
    a->room -= aligned(size);
    a->live_while_open++;
    return node;
}

// A node of an arena closed while some were alive: they are freed from any thread now.
__attribute__((noinline)) static void release_handed_over(arena *a) {
    if (atomic_fetch_sub_explicit(&a->live, 1, memory_order_acq_rel) == 1) destroy(a);
}

// The common cases inline: outside a scope (what the main loop makes, a message over 64 KB),
// a test and a call to malloc or free; inside, a bump of a pointer and a count.
static void *allocate(size_t size) {
    arena *a = open_arena;
    if (!a) return malloc(size);
    if (size <= a->room && aligned(size) <= a->room) {
        void *node = a->next;
        a->next += aligned(size);
        a->room -= aligned(size);
        a->live_while_open++;
        return node;
    }
    return allocate_in_new_slot(a, size);
}

static void release(void *node) {
    int slot = slot_of(node);
    if (slot == NO_SLOT) {
        free(node);
        return;
    }
    arena *owner = slot_owner[slot];
    if (owner == open_arena) {
        owner->live_while_open--;  // its thread's own, still open: no other thread sees it
        return;
    }
    release_handed_over(owner);
}

static void free_scratch_at_thread_exit(void *thread_scratch);

// Before main, and so before jansson allocates anything.
__attribute__((constructor)) static void install(void) {
    const char *setting = getenv("DATASOURCED_JSON_ARENAS");
    if (!setting || strcmp(setting, "0") != 0) {
        // One slot more than needed, to start the region on a slot boundary (the kernel can
        // then back a slot with huge pages); the ends left over are given back.
        size_t reserved_size = REGION_SIZE + SLOT_SIZE;
        char *reserved = mmap(NULL, reserved_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (reserved != MAP_FAILED) {
            char *start = (char *)(((uintptr_t)reserved + SLOT_SIZE - 1) & ~(uintptr_t)(SLOT_SIZE - 1));
            if (start > reserved) munmap(reserved, (size_t)(start - reserved));
            size_t tail = (size_t)(reserved + reserved_size - (start + REGION_SIZE));
            if (tail > 0) munmap(start + REGION_SIZE, tail);
            region = start;
            for (int slot = SLOT_COUNT - 1; slot >= 0; slot--) {
                slot_next[slot] = first_free_slot;
                first_free_slot = slot;
            }
        }
    }
    pthread_key_create(&scratch_key, free_scratch_at_thread_exit);
    json_set_alloc_funcs(allocate, release);
}

// A new arena holding one slot, or NULL (arenas off, no slot free, no memory).
static arena *new_arena(void) {
    if (!region) return NULL;
    arena *a = calloc(1, sizeof(arena));
    if (!a) return NULL;
    atomic_init(&a->live, 0);
    pthread_mutex_lock(&lock);
    int slot = take_slot(a);
    if (slot == NO_SLOT) {
        pthread_mutex_unlock(&lock);
        free(a);
        return NULL;
    }
    a->first_slot = slot;
    a->slots_taken = 1;
    start_slot(a, slot);
    a->serial = ++last_serial;
    a->next_alive = first_alive;
    if (first_alive) first_alive->previous_alive = a;
    first_alive = a;
    pthread_mutex_unlock(&lock);
    return a;
}

// Closes `a` with nodes still alive: from now on they are freed from any thread, and the
// last one frees the arena.
static void hand_over(arena *a) {
    atomic_store_explicit(&a->live, a->live_while_open, memory_order_release);
}

// The thread's scratch arena, as pthread hands it back at the thread's end (nothing of it
// is alive between scopes).
static void free_scratch_at_thread_exit(void *thread_scratch) {
    destroy(thread_scratch);
}

int json_scratch_begin(void) {
    if (open_arena) return 0;
    if (!scratch) {
        scratch = new_arena();
        if (!scratch) return 0;
        pthread_setspecific(scratch_key, scratch);
    }
    open_arena = scratch;
    return 1;
}

void json_scratch_end(void) {
    arena *a = open_arena;
    if (!a) return;
    open_arena = NULL;
    if (a->live_while_open == 0) {
        // All of it free: the next scope carves from the start of the first slot, in cache.
        // Slots taken beyond it (a scope that made more than a slot holds) are given back.
        if (a->slots_taken > 1) give_back_all_but_the_first_slot(a);
        start_slot(a, a->first_slot);
        a->out_of_slots = 0;
        return;
    }
    // Something made in the scope is kept: the slot goes with it, freed with its last node.
    hand_over(a);
    scratch = NULL;
    pthread_setspecific(scratch_key, NULL);
}

void json_free_dumped(char *text) {
    release(text);
}

unsigned long long json_arena_serial_of(const void *node) {
    int slot = slot_of(node);
    if (slot == NO_SLOT) return 0;
    pthread_mutex_lock(&lock);
    arena *owner = slot_owner[slot];
    unsigned long long serial = owner ? owner->serial : 0;
    pthread_mutex_unlock(&lock);
    return serial;
}

int json_arena_is_alive(unsigned long long serial) {
    pthread_mutex_lock(&lock);
    arena *a = first_alive;
    while (a && a->serial != serial) a = a->next_alive;
    pthread_mutex_unlock(&lock);
    return a != NULL;
}

int json_arenas_are_on(void) {
    return region != NULL;
}

void json_arena_limit_slots_on_this_thread(int count) {
    slots_left_on_this_thread = count < 0 ? -1 : count;
}

unsigned long long json_scratch_serial_on_this_thread(void) {
    return scratch ? scratch->serial : 0;
}

int json_arena_slot_count(unsigned long long serial) {
    int count = 0;
    pthread_mutex_lock(&lock);
    for (int slot = 0; slot < SLOT_COUNT; slot++) {
        if (slot_owner[slot] && slot_owner[slot]->serial == serial) count++;
    }
    pthread_mutex_unlock(&lock);
    return count;
}
