/// What a failed page request leads to: a server that asks to wait is asked again, within a
/// budget that each new load restores; a `404` past the last page ends the list (Django REST
/// framework answers "Invalid page." there); anything else fails the direction.
///
/// A failure is an event answering the action; the owner makes the request again, ends the
/// list, or records the error and changes the rows as the action says.
struct PageFailures {
    enum Action: Equatable {
        /// The same request again, after the server's `Retry-After`.
        case retry(afterSeconds: Double)
        /// The list ends where it is, without an error.
        case endList
        /// The direction fails: `recordedIn` is the load state that shows the error (nil when
        /// there is no list yet for it to belong to), `rows` what becomes of the rows.
        case fail(recordedIn: LoadDirection?, rows: Rows)
    }

    enum Rows: Equatable {
        /// They stay as they are: the page before failed, and is asked for again later.
        case stay
        /// The loaded rows stay, and the trailing row shows the failure.
        case trailingRowShowsIt
        /// Nothing was loaded: the error row alone (unless the previous query's rows show).
        case errorRow
    }

    let paginator: PaginatorConfiguration
    private(set) var retriesLeft = 0

    init(paginator: PaginatorConfiguration) { self.paginator = paginator }

    /// A load starts: the retry budget is whole again.
    mutating func started() { retriesLeft = paginator.retryAfterRetries }

    mutating func failed(_ error: FetchError, _ direction: LoadDirection, loadedOnce: Bool) -> Action {
        if let delay = error.retryAfterSeconds, retriesLeft > 0, delay <= paginator.retryAfterMaximumSeconds {
            retriesLeft -= 1
            return .retry(afterSeconds: delay)
        }
        if direction == .append, loadedOnce, error.kind == .http, error.status == 404, paginator.endOnNotFound {
            return .endList
        }
        switch direction {
        case .prepend: return .fail(recordedIn: .prepend, rows: .stay)
        case .refresh: return .fail(recordedIn: .refresh, rows: loadedOnce ? .trailingRowShowsIt : .errorRow)
        case .append: return loadedOnce ? .fail(recordedIn: .append, rows: .trailingRowShowsIt) : .fail(recordedIn: nil, rows: .errorRow)
        }
    }
}
