import DataSources
import JSONKit
import JSONRPC

/// Every notification the daemon sends; `initialize` lists them from here.
enum NotificationName: String, CaseIterable {
    case willLoadData = "dataSource/willLoadData"
    case didPartiallyLoad = "dataSource/didPartiallyLoad"
    case finishedLoading = "dataSource/finishedLoading"
    case failedWithError = "dataSource/failedWithError"
    case didChange = "dataSource/didChange"
    case didChangeFreshness = "dataSource/didChangeFreshness"
}

/// A source's event as the notification that carries it.
struct SourceNotification {
    let source: String
    let event: Event

    enum Event {
        case willLoadData
        case didPartiallyLoad
        case finishedLoading
        case failedWithError(LoadFailure)
        /// `values`: the inserted and updated rows, when the client asked for them.
        case didChange(ChangeSet, revision: Int, values: ChangeValues?)
        /// `cachedAt`: seconds since 1970, while stale.
        case didChangeFreshness(stale: Bool, cachedAt: Double?)
    }

    /// The rows a change brought, parallel to its `inserted` and `updated` index paths.
    struct ChangeValues {
        let inserted: [JSON]
        let updated: [JSON]
    }

    var name: NotificationName {
        switch event {
        case .willLoadData: .willLoadData
        case .didPartiallyLoad: .didPartiallyLoad
        case .finishedLoading: .finishedLoading
        case .failedWithError: .failedWithError
        case .didChange: .didChange
        case .didChangeFreshness: .didChangeFreshness
        }
    }

    var notification: Notification {
        var params: [(String, JSON)] = [("source", JSON(source))]
        switch event {
        case .willLoadData, .didPartiallyLoad, .finishedLoading:
            break
        case .failedWithError(let failure):
            params.append(("error", failure.json))
        case .didChange(let changes, let revision, let values):
            params += [("changes", changes.json), ("revision", JSON(revision)), ("previousRevision", JSON(revision - 1))]
            if let values {
                params.append(("values", ["inserted": .array(values.inserted), "updated": .array(values.updated)]))
            }
        case .didChangeFreshness(let stale, let cachedAt):
            params.append(("stale", JSON(stale)))
            if let cachedAt { params.append(("cachedAt", JSON(Timestamp.iso8601(cachedAt)))) }
        }
        // Packed, so that a change set's packed index paths stay packed until the writer.
        return Notification(method: name.rawValue, params: .packedObject(params))
    }
}
