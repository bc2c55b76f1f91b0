// Scans of JSON text made before jansson parses it.
#ifndef CJSONSCAN_H
#define CJSONSCAN_H

#include <stddef.h>

// The offset of the first `[` or `{` outside strings at which nesting exceeds `limit`, or -1
// when it never does. Reads bytes only: nothing is parsed or checked, and malformed text
// (an unterminated string, more closing brackets than opening ones) is scanned as it is.
long json_nesting_exceeding(const unsigned char *bytes, size_t count, long limit);

// The offset of the comma at which an array holds more than `limit` elements (limit >= 1),
// or at which the text holds `total_limit` commas outside strings (values and members past the
// first of each array and object; `*total_exceeded` is then set), or -1 when neither happens: a
// page's row count, and the nodes jansson would make, checked before it makes any. Byte by byte,
// one pass; arrays nested deeper than `max_depth` (at most 2048) are not counted on their own.
long json_array_longer_than(const unsigned char *bytes, size_t count, long limit, long max_depth, long total_limit,
                            int *total_exceeded);

#endif
