import DataSources
import JSONKit
import JSONRPC
import WireSchema

/// Every notification the daemon sends; `initialize` lists them from here.
enum NotificationName: String, CaseIterable {
    case willLoadData = "dataSource/willLoadData"
    case didPartiallyLoad = "dataSource/didPartiallyLoad"
    case finishedLoading = "dataSource/finishedLoading"
    case failedWithError = "dataSource/failedWithError"
    case didChange = "dataSource/didChange"
    case didChangeFreshness = "dataSource/didChangeFreshness"
    case didChangeLoadState = "dataSource/didChangeLoadState"
    case didSettleMutation = "dataSource/didSettleMutation"
}

/// A source's event as the notification that carries it.
struct SourceNotification {
    let source: String
    let event: Event
    /// Whether the client asked for runs of rows as `[section, item, count]` (`changeRanges`).
    var changeRanges = false

    enum Event {
        case willLoadData
        case didPartiallyLoad
        case finishedLoading
        case failedWithError(LoadFailure)
        /// `values`: the inserted and updated rows, when the client asked for them.
        case didChange(ChangeSet, revision: Int, values: ChangeValues?)
        /// `cachedAt`: seconds since 1970, while stale.
        case didChangeFreshness(stale: Bool, cachedAt: Double?)
        case didChangeLoadState(LoadStates)
        case didSettleMutation(MutationSettlement)
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
        case .didChangeLoadState: .didChangeLoadState
        case .didSettleMutation: .didSettleMutation
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
            params += [
                ("changes", changes.json(ranges: changeRanges)), ("revision", JSON(revision)), ("previousRevision", JSON(revision - 1)),
            ]
            if let values {
                params.append(("values", ["inserted": .array(values.inserted), "updated": .array(values.updated)]))
            }
        case .didChangeFreshness(let stale, let cachedAt):
            params.append(("stale", JSON(stale)))
            if let cachedAt { params.append(("cachedAt", JSON(Timestamp.iso8601(cachedAt)))) }
        case .didChangeLoadState(let states):
            params.append(("loadStates", states.json))
        case .didSettleMutation(let settlement):
            params += [
                ("mutation", JSON(settlement.mutation)), ("action", JSON(settlement.action)), ("status", JSON(settlement.status.rawValue)),
            ]
            if let error = settlement.error { params.append(("error", LoadFailure.fetch(error).json)) }
        }
        // Packed, so that a change set's packed index paths stay packed until the writer.
        return Notification(method: name.rawValue, params: .packedObject(params))
    }
}

extension NotificationName {
    /// One line: when the daemon sends it.
    var summary: String {
        switch self {
        case .willLoadData: "a load cycle begins"
        case .didPartiallyLoad: "part of a cycle's load arrived (multi and sectioned sources)"
        case .finishedLoading: "a cycle ended with its data"
        case .failedWithError: "a cycle ended with a failure"
        case .didChange: "the rows changed"
        case .didChangeFreshness: "the rows shown started or stopped being unconfirmed rows from the persisted cache"
        case .didChangeLoadState:
            "a paginated source's load state changed in at least one direction (sent to clients with the loadStates capability)"
        case .didSettleMutation: "an action's mutation was committed, rolled back, or queued to be sent again"
        }
    }

    /// Its params.
    var paramsSchema: Schema {
        switch self {
        case .willLoadData:
            .object(
                [
                    "source": .ref("SourceName")
                ],
                required: ["source"])
        case .didPartiallyLoad:
            .object(
                [
                    "source": .ref("SourceName")
                ],
                required: ["source"])
        case .finishedLoading:
            .object(
                [
                    "source": .ref("SourceName")
                ],
                required: ["source"])
        case .failedWithError:
            .object(
                [
                    "source": .ref("SourceName"),
                    "error": .ref("LoadFailure"),
                ],
                required: ["source", "error"])
        case .didChange:
            .object(
                [
                    "source": .ref("SourceName"),
                    "changes": .ref("ChangeSet"),
                    "revision": .integer(in: 1...Int.max),
                    "previousRevision": .integer(in: 0...Int.max),
                    "values": .object(
                        [
                            "inserted": .array(of: .ref("Row")),
                            "updated": .array(of: .ref("Row")),
                        ],
                        required: ["inserted", "updated"]),
                ],
                required: ["source", "changes", "revision", "previousRevision"])
        case .didChangeFreshness:
            .object(
                [
                    "source": .ref("SourceName"),
                    "stale": .boolean,
                    "cachedAt": .string(format: "date-time").described("RFC 3339, UTC, to the millisecond"),
                ],
                required: ["source", "stale"])
        case .didChangeLoadState:
            .object(
                [
                    "source": .ref("SourceName"),
                    "loadStates": .ref("LoadStates"),
                ],
                required: ["source", "loadStates"])
        case .didSettleMutation:
            .object(
                [
                    "source": .ref("SourceName"),
                    "mutation": .string.described("the ID performAction answered"),
                    "action": .string.described("the action's name"),
                    "status": .oneOfValues(MutationSettlement.Status.allCases.map { JSON($0.rawValue) }),
                    "error": .ref("FetchError").described("why it was rolled back or queued; kind conflict for 409 and 412"),
                ],
                required: ["source", "mutation", "action", "status"])
        }
    }

    /// The anchor of its section in Protocol.md.
    var section: String {
        switch self {
        case .didChangeFreshness: "persisted-cache"
        case .didChangeLoadState: "load-states-and-retry"
        case .didSettleMutation: "actions"
        default: "notifications"
        }
    }

    /// This notification in Protocol/openrpc.json's `x-notifications`.
    var openRPC: JSON {
        .object([
            ("name", JSON(rawValue)), ("summary", JSON(summary)), ("params", paramsSchema.json),
            ("externalDocs", .object([("description", "its prose"), ("url", JSON("Protocol.md#\(section)"))])),
        ])
    }
}
