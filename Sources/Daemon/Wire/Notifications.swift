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
    case didChangeLoadState = "dataSource/didChangeLoadState"
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
        case didChangeLoadState(LoadStates)
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
        case .didChangeLoadState(let states):
            params.append(("loadStates", states.json))
        }
        // Packed, so that a change set's packed index paths stay packed until the writer.
        return Notification(method: name.rawValue, params: .packedObject(params))
    }
}

extension NotificationName {
    /// This notification in Protocol/openrpc.json's `x-notifications`.
    var openRPC: String {
        switch self {
        case .willLoadData:
            #"""
            {
              "name": "dataSource/willLoadData",
              "summary": "a load cycle begins",
              "params": {
                "type": "object",
                "properties": {
                  "source": {
                    "$ref": "#/components/schemas/SourceName"
                  }
                },
                "required": [
                  "source"
                ],
                "additionalProperties": false
              }
            }
            """#
        case .didPartiallyLoad:
            #"""
            {
              "name": "dataSource/didPartiallyLoad",
              "summary": "part of a cycle's load arrived (multi and sectioned sources)",
              "params": {
                "type": "object",
                "properties": {
                  "source": {
                    "$ref": "#/components/schemas/SourceName"
                  }
                },
                "required": [
                  "source"
                ],
                "additionalProperties": false
              }
            }
            """#
        case .finishedLoading:
            #"""
            {
              "name": "dataSource/finishedLoading",
              "summary": "a cycle ended with its data",
              "params": {
                "type": "object",
                "properties": {
                  "source": {
                    "$ref": "#/components/schemas/SourceName"
                  }
                },
                "required": [
                  "source"
                ],
                "additionalProperties": false
              }
            }
            """#
        case .failedWithError:
            #"""
            {
              "name": "dataSource/failedWithError",
              "summary": "a cycle ended with a failure",
              "params": {
                "type": "object",
                "properties": {
                  "source": {
                    "$ref": "#/components/schemas/SourceName"
                  },
                  "error": {
                    "$ref": "#/components/schemas/LoadFailure"
                  }
                },
                "required": [
                  "source",
                  "error"
                ],
                "additionalProperties": false
              }
            }
            """#
        case .didChange:
            #"""
            {
              "name": "dataSource/didChange",
              "summary": "the rows changed",
              "params": {
                "type": "object",
                "properties": {
                  "source": {
                    "$ref": "#/components/schemas/SourceName"
                  },
                  "changes": {
                    "$ref": "#/components/schemas/ChangeSet"
                  },
                  "revision": {
                    "type": "integer",
                    "minimum": 1
                  },
                  "previousRevision": {
                    "type": "integer",
                    "minimum": 0
                  },
                  "values": {
                    "type": "object",
                    "properties": {
                      "inserted": {
                        "type": "array",
                        "items": {
                          "$ref": "#/components/schemas/Row"
                        }
                      },
                      "updated": {
                        "type": "array",
                        "items": {
                          "$ref": "#/components/schemas/Row"
                        }
                      }
                    },
                    "required": [
                      "inserted",
                      "updated"
                    ],
                    "additionalProperties": false
                  }
                },
                "required": [
                  "source",
                  "changes",
                  "revision",
                  "previousRevision"
                ],
                "additionalProperties": false
              }
            }
            """#
        case .didChangeFreshness:
            #"""
            {
              "name": "dataSource/didChangeFreshness",
              "summary": "the rows shown started or stopped being unconfirmed rows from the persisted cache",
              "params": {
                "type": "object",
                "properties": {
                  "source": {
                    "$ref": "#/components/schemas/SourceName"
                  },
                  "stale": {
                    "type": "boolean"
                  },
                  "cachedAt": {
                    "type": "string",
                    "format": "date-time",
                    "description": "RFC 3339, UTC, to the millisecond"
                  }
                },
                "required": [
                  "source",
                  "stale"
                ],
                "additionalProperties": false
              }
            }
            """#
        case .didChangeLoadState:
            #"""
            {
              "name": "dataSource/didChangeLoadState",
              "summary": "a paginated source's load state changed in at least one direction (sent to clients with the loadStates capability)",
              "params": {
                "type": "object",
                "properties": {
                  "source": {
                    "$ref": "#/components/schemas/SourceName"
                  },
                  "loadStates": {
                    "$ref": "#/components/schemas/LoadStates"
                  }
                },
                "required": [
                  "source",
                  "loadStates"
                ],
                "additionalProperties": false
              }
            }
            """#
        }
    }
}
