#include <zlib.h>

/* inflateInit2 and deflateInit2 are macros (they pass zlib's version and the stream's size),
   which Swift cannot call. */
static inline int czlib_inflate_init(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

static inline int czlib_deflate_init(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
