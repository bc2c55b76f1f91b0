// jansson's allocator, with arenas for documents that are read once and dropped.
//
// jansson has one process-wide pair of allocation functions (json_set_alloc_funcs); this
// target installs its own before main runs. Arena memory comes from one address range
// reserved at start-up (without access: a slot is made writable when first used), cut into
// 4 MB slots, so a free knows from the address alone whether a node is an arena's (and
// which: each slot records its owner) or malloc's. Nodes carry no header, malloc's nodes
// cost one comparison more to free, and no caller can free a node the wrong way, from
// whichever thread.
//
// An arena is the slots that the nodes of one parse are carved from. It is freed when its
// last node is: cheap to make and to drop whole (a page of a thousand objects is some
// 30,000 nodes), at the cost of holding all of its memory while any node lives.
#ifndef CJSONARENA_H
#define CJSONARENA_H

#include <stddef.h>

// Until json_arena_end, jansson allocations on the calling thread come from a new arena.
// Returns the arena's serial number (never 0), or 0 when none was opened: arenas are off,
// no slot is free (jansson then allocates with malloc as usual), or one is open on this
// thread already (arenas do not nest: allocations go on coming from that one, and the
// caller must not call json_arena_end for it). An allocation that does not fit a slot, or
// made when the slots run out during the parse, comes from malloc: a document is never
// refused for its size.
//
// DATASOURCED_JSON_ARENAS=0 in the environment turns arenas off, so that every node comes
// from malloc: for valgrind or AddressSanitizer, which do not see inside a slot.
unsigned long long json_arena_begin(void);

// Closes the calling thread's arena: later allocations use malloc again, and the arena is
// freed as soon as none of its nodes is alive (at once if none is).
void json_arena_end(void);

// Until json_scratch_end, jansson allocations on the calling thread come from the thread's
// scratch arena: a slot kept by the thread, carved from its start again whenever a scope
// ends with none of its nodes alive (slots taken beyond it in a scope are given back then).
// For values made and dropped in one scope (an answer built and encoded by the writer
// thread; a page parsed, mapped and dropped): no malloc, frees without atomics, memory
// already in cache. Nothing made in a scope may reach another thread before it ends. A node
// kept past the scope is safe: the arena then becomes an ordinary one, freed with its last
// node, and the thread makes a new one next time. Returns 1, or 0 when no scope was opened
// (an arena is open on this thread, or none could be made): then do not end it.
int json_scratch_begin(void);
void json_scratch_end(void);

// Frees a string json_dumps returned, with the functions installed here (which is what
// jansson's documentation asks of a program that installs its own).
void json_free_dumped(char *text);

// For tests and diagnostics: the serial number of the arena `node` was carved from (0 when
// malloc made it), whether the arena with `serial` still holds its memory, the serial of
// the last arena opened on the calling thread (0 if none was).
unsigned long long json_arena_serial_of(const void *node);
int json_arena_is_alive(unsigned long long serial);
unsigned long long json_arena_last_serial_on_this_thread(void);
// The serial of the calling thread's scratch arena (0 when it has none: never made, or
// handed over with a node kept past its scope).
unsigned long long json_scratch_serial_on_this_thread(void);
// How many slots the arena with `serial` holds (0 once it is freed).
int json_arena_slot_count(unsigned long long serial);

#endif
