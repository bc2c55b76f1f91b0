/// Why a load cycle ended in `failedWithError`: a fetch that failed, or, for composed
/// sources, the failures of their children.
package indirect enum LoadFailure: Error, Sendable, Equatable {
    case fetch(FetchError)
    /// A child's failure passed on by a sectioned source, naming the child.
    case child(source: String, LoadFailure)
    /// The children of a multi source that failed in one cycle.
    case children(message: String, failures: [ChildFailure])

    package struct ChildFailure: Sendable, Equatable {
        package let source: String
        package let failure: LoadFailure

        package init(source: String, failure: LoadFailure) {
            self.source = source
            self.failure = failure
        }
    }

    package static func cancelled(_ message: String, url: String? = nil) -> LoadFailure {
        .fetch(FetchError(kind: .cancelled, message: message, url: url))
    }
}

/// What ended a load in flight, named in its `cancelled` failure.
package enum CancelReason: Sendable {
    case cancelFetch, destroySource, shutdown, updateSource

    package var message: String {
        switch self {
        case .cancelFetch: "cancelled by cancelFetch"
        case .destroySource: "cancelled: the source was destroyed (destroySource)"
        case .shutdown: "cancelled by shutdown"
        case .updateSource: "cancelled by updateSource: the source's query changed"
        }
    }
}
