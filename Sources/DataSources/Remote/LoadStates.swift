/// Where a paginated source stands in each direction it loads (Paging 3's `LoadState`):
/// `refresh` is the first page of a run (`fetchData`), `prepend` the page before the first one
/// loaded, `append` the page after the last one.
package enum LoadState: Sendable, Equatable {
    /// Nothing in flight, and more may be loaded in this direction.
    case idle
    case loading
    /// The last load in this direction failed; `retry` asks for it again.
    case error(FetchError)
    /// Nothing remains in this direction.
    case endReached

    package var name: String {
        switch self {
        case .idle: "idle"
        case .loading: "loading"
        case .error: "error"
        case .endReached: "endReached"
        }
    }
}

/// The three directions a paginated source loads in.
package enum LoadDirection: String, Sendable, CaseIterable {
    case refresh, prepend, append
}

/// `describeSource.loadStates`, and what `dataSource/didChangeLoadState` carries.
package struct LoadStates: Sendable, Equatable {
    package var refresh: LoadState
    package var prepend: LoadState
    package var append: LoadState

    package init(refresh: LoadState = .idle, prepend: LoadState = .idle, append: LoadState = .idle) {
        self.refresh = refresh
        self.prepend = prepend
        self.append = append
    }

    package subscript(direction: LoadDirection) -> LoadState {
        switch direction {
        case .refresh: refresh
        case .prepend: prepend
        case .append: append
        }
    }
}
