// Scans of JSON text made before jansson parses it.
#ifndef CJSONSCAN_H
#define CJSONSCAN_H

#include <stddef.h>

// The offset of the first `[` or `{` outside strings at which nesting exceeds `limit`, or -1
// when it never does. Reads bytes only: nothing is parsed or checked, and malformed text
// (an unterminated string, more closing brackets than opening ones) is scanned as it is.
long json_nesting_exceeding(const unsigned char *bytes, size_t count, long limit);

#endif
