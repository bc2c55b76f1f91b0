@testable import DataSources
import Testing

/// Failed page requests alone: the Retry-After budget, the 404 past the last page, and what
/// each direction's failure does to the rows.
@Suite struct PageFailuresTests {
    static func failures(_ configure: (inout PaginatorConfiguration) -> Void = { _ in }) -> PageFailures {
        var paginator = PaginatorConfiguration(pageSize: 2)
        configure(&paginator)
        var failures = PageFailures(paginator: paginator)
        failures.started()
        return failures
    }
    static func rateLimited(after seconds: Double) -> FetchError {
        var error = FetchError(kind: .http, message: "HTTP status 429", status: 429)
        error.retryAfterSeconds = seconds
        return error
    }
    static let notFound = FetchError(kind: .http, message: "HTTP status 404", status: 404)

    @Test func aServerThatAsksToWaitIsAskedAgainUntilTheBudgetIsSpent() {
        var failures = Self.failures { $0.retryAfterRetries = 2 }
        #expect(failures.failed(Self.rateLimited(after: 3), .append, loadedOnce: true) == .retry(afterSeconds: 3))
        #expect(failures.failed(Self.rateLimited(after: 1), .append, loadedOnce: true) == .retry(afterSeconds: 1))
        #expect(
            failures.failed(Self.rateLimited(after: 1), .append, loadedOnce: true)
                == .fail(recordedIn: .append, rows: .trailingRowShowsIt))
        failures.started()
        #expect(
            failures.failed(Self.rateLimited(after: 1), .prepend, loadedOnce: true) == .retry(afterSeconds: 1), "a new load: whole again")
    }

    @Test func aWaitLongerThanAllowedOrNoBudgetIsAFailure() {
        var failures = Self.failures {
            $0.retryAfterRetries = 1
            $0.retryAfterMaximumSeconds = 10
        }
        #expect(failures.failed(Self.rateLimited(after: 11), .refresh, loadedOnce: false) == .fail(recordedIn: .refresh, rows: .errorRow))
        #expect(failures.retriesLeft == 1, "a refused wait spends nothing")
        var none = Self.failures()
        #expect(none.failed(Self.rateLimited(after: 1), .prepend, loadedOnce: true) == .fail(recordedIn: .prepend, rows: .stay))
    }

    @Test func a404AfterTheFirstPageEndsTheList() {
        var failures = Self.failures()
        #expect(failures.failed(Self.notFound, .append, loadedOnce: true) == .endList)
        #expect(failures.failed(Self.notFound, .refresh, loadedOnce: true) == .fail(recordedIn: .refresh, rows: .trailingRowShowsIt))
        #expect(failures.failed(Self.notFound, .prepend, loadedOnce: true) == .fail(recordedIn: .prepend, rows: .stay))
        #expect(failures.failed(Self.notFound, .append, loadedOnce: false) == .fail(recordedIn: nil, rows: .errorRow))
        var strict = Self.failures { $0.endOnNotFound = false }
        #expect(strict.failed(Self.notFound, .append, loadedOnce: true) == .fail(recordedIn: .append, rows: .trailingRowShowsIt))
        let transport = FetchError(kind: .transport, message: "reset", status: 404)
        #expect(failures.failed(transport, .append, loadedOnce: true) == .fail(recordedIn: .append, rows: .trailingRowShowsIt))
    }
}
