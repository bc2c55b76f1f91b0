#include <jansson.h>

/* JSONKit relies on these; fail the build here, clearly, rather than at run time. */
#if JANSSON_VERSION_HEX < 0x020E00
#error "datasourced needs jansson 2.14 or newer (json_object_getn, json_object_iter_key_len): install libjansson-dev >= 2.14"
#endif
#if !(JSON_HAVE_ATOMIC_BUILTINS || JSON_HAVE_SYNC_BUILTINS)
#error "datasourced needs a jansson built with atomic reference counts: JSONKit shares frozen trees between threads"
#endif
