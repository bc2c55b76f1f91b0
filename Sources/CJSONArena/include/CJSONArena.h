// jansson's allocator, with arenas for values that are made and dropped in one scope.
//
// jansson has one process-wide pair of allocation functions (json_set_alloc_funcs); this
// target installs its own before main runs. Arena memory comes from one address range
// reserved at start-up (without access: a slot is made writable when first used), cut into
// 4 MB slots, so a free knows from the address alone whether a node is an arena's (and
// which: each slot records its owner) or malloc's. Nodes carry no header, malloc's nodes
// cost one comparison more to free, and no caller can free a node the wrong way, from
// whichever thread.
//
// The one way in is a scratch scope: each thread keeps an arena (one slot) that a scope
// carves from; a page parsed, mapped and dropped in a scope is some 30,000 nodes made by a
// bump of a pointer and freed by a count. An arena whose node outlives its scope is freed
// with that last node, from whichever thread drops it. Outside a scope, every node is
// malloc's.
#ifndef CJSONARENA_H
#define CJSONARENA_H

#include <stddef.h>

// Until json_scratch_end, jansson allocations on the calling thread come from the thread's
// scratch arena: a slot kept by the thread, carved from its start again whenever a scope
// ends with none of its nodes alive (slots taken beyond it in a scope are given back then).
// For values made and dropped in one scope (an answer built and encoded by the writer
// thread; a page parsed, mapped and dropped): no malloc, frees without atomics, memory
// already in cache. Nothing made in a scope may reach another thread before it ends. A node
// kept past the scope is safe: the arena is then freed with its last node, from any thread,
// and the thread makes a new scratch arena next time. Returns 1, or 0 when no scope was
// opened (one is open on this thread already, and allocations go on coming from it; or no
// arena could be made: arenas are off, or no slot is free): then do not end it.
//
// An allocation larger than a slot, or made when the slots run out inside a scope, comes
// from malloc: nothing is refused for its size.
//
// DATASOURCED_JSON_ARENAS=0 in the environment turns arenas off, so that every node comes
// from malloc: for valgrind or AddressSanitizer, which do not see inside a slot.
int json_scratch_begin(void);
void json_scratch_end(void);

// Frees a string json_dumps returned, with the functions installed here (which is what
// jansson's documentation asks of a program that installs its own).
void json_free_dumped(char *text);

// For tests and diagnostics: the serial number of the arena `node` was carved from (0 when
// malloc made it), and whether the arena with `serial` still holds its memory.
unsigned long long json_arena_serial_of(const void *node);
int json_arena_is_alive(unsigned long long serial);
// The serial of the calling thread's scratch arena (0 when it has none: never made, or
// handed over with a node kept past its scope).
unsigned long long json_scratch_serial_on_this_thread(void);
// How many slots the arena with `serial` holds (0 once it is freed).
int json_arena_slot_count(unsigned long long serial);
// 0 when arenas are off (DATASOURCED_JSON_ARENAS=0, or the reservation failed).
int json_arenas_are_on(void);
// Lets the calling thread take at most `count` more slots (a negative count: no limit), as if
// the others were taken: running out, tested without taking slots from other threads.
void json_arena_limit_slots_on_this_thread(int count);

#endif
