#include "CJSONScan.h"
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Where a scan is between two bytes.
typedef struct {
    long depth;
    int in_string;
    int escaped;  // the last byte was a backslash inside a string
} scan_state;

// Byte by byte: the rule itself, and the scan wherever a block is not plain (see below).
static long scan_bytes(const unsigned char *bytes, size_t start, size_t end, scan_state *state, long limit) {
    for (size_t offset = start; offset < end; offset++) {
        unsigned char byte = bytes[offset];
        if (state->in_string) {
            if (state->escaped) state->escaped = 0;
            else if (byte == '\\') state->escaped = 1;
            else if (byte == '"') state->in_string = 0;
        } else if (byte == '"') {
            state->in_string = 1;
        } else if (byte == '[' || byte == '{') {
            if (++state->depth > limit) return (long)offset;
        } else if (byte == ']' || byte == '}') {
            state->depth--;
        }
    }
    return -1;
}

#if defined(__SSE2__)
// Bit i set where byte i of the 16 equals `value`.
static inline uint64_t equal_bits(__m128i chunk, unsigned char value) {
    return (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, _mm_set1_epi8((char)value)));
}

// Bit i set when an odd number of bits 0...i of `bits` are: the bytes from an opening
// quote up to (not including) its closing one.
static inline uint64_t prefix_xor(uint64_t bits) {
    bits ^= bits << 1;
    bits ^= bits << 2;
    bits ^= bits << 4;
    bits ^= bits << 8;
    bits ^= bits << 16;
    bits ^= bits << 32;
    return bits;
}
#endif

long json_nesting_exceeding(const unsigned char *bytes, size_t count, long limit) {
    scan_state state = {0, 0, 0};
    size_t offset = 0;
#if defined(__SSE2__)
    // 64 bytes at a time. A block without a backslash (most are) needs no byte-by-byte
    // state: its strings are the spans between its quotes, and its depth changes by its
    // brackets outside them. A block with a backslash, or one whose brackets could pass the
    // limit, is scanned byte by byte to be exact.
    for (; count - offset >= 64; offset += 64) {
        uint64_t quotes = 0, backslashes = 0, opens = 0, closes = 0;
        for (int part = 0; part < 4; part++) {
            __m128i chunk = _mm_loadu_si128((const __m128i *)(bytes + offset + 16 * part));
            // '[' and '{', ']' and '}' differ only in bit 5.
            __m128i folded = _mm_or_si128(chunk, _mm_set1_epi8(0x20));
            quotes |= equal_bits(chunk, '"') << (16 * part);
            backslashes |= equal_bits(chunk, '\\') << (16 * part);
            opens |= equal_bits(folded, '{') << (16 * part);
            closes |= equal_bits(folded, '}') << (16 * part);
        }
        if (backslashes || state.escaped) {
            long found = scan_bytes(bytes, offset, offset + 64, &state, limit);
            if (found >= 0) return found;
            continue;
        }
        uint64_t inside = prefix_xor(quotes) ^ (state.in_string ? ~(uint64_t)0 : 0);
        long opened = __builtin_popcountll(opens & ~inside);
        if (state.depth + opened > limit) {
            long found = scan_bytes(bytes, offset, offset + 64, &state, limit);
            if (found >= 0) return found;
            continue;
        }
        state.depth += opened - __builtin_popcountll(closes & ~inside);
        state.in_string ^= __builtin_popcountll(quotes) & 1;
    }
#endif
    return scan_bytes(bytes, offset, count, &state, limit);
}

long json_array_longer_than(const unsigned char *bytes, size_t count, long limit, long max_depth, long total_limit, int *total_exceeded) {
    long total = 0;  // commas outside strings, in arrays and objects alike: values beyond the first of each
    *total_exceeded = 0;
    // Per open bracket: its commas so far, negative for an object (whose members are not counted).
    // Deeper than max_depth is not looked into (json_nesting_exceeding refuses it first).
    long commas[2050];
    if (max_depth > 2048) max_depth = 2048;
    long depth = 0;
    int in_string = 0, escaped = 0;
    for (size_t offset = 0; offset < count; offset++) {
        unsigned char byte = bytes[offset];
        if (in_string) {
            if (escaped) escaped = 0;
            else if (byte == '\\') escaped = 1;
            else if (byte == '"') in_string = 0;
            continue;
        }
        switch (byte) {
        case '"': in_string = 1; break;
        case '[':
        case '{':
            depth++;
            if (depth <= max_depth) commas[depth] = byte == '[' ? 0 : -1;
            break;
        case ']':
        case '}':
            if (depth > 0) depth--;
            break;
        case ',':
            if (++total >= total_limit) {
                *total_exceeded = 1;
                return (long)offset;
            }
            // n commas: n + 1 elements.
            if (depth > 0 && depth <= max_depth && commas[depth] >= 0 && ++commas[depth] >= limit) return (long)offset;
            break;
        default: break;
        }
    }
    return -1;
}
