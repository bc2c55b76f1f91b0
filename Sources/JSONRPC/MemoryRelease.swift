import CSystemShims

package enum MemoryRelease {
    /// Hands the pages malloc holds free back to the kernel. malloc keeps freed memory for
    /// reuse, so a one-off peak (a huge message, a backlog of unread answers) would
    /// otherwise stay resident for good.
    package static func trimMalloc() {
        _ = cshims_trim_malloc()
    }
}
