// The HTTPFetch module is being written; the daemon uses HTTPGet.
