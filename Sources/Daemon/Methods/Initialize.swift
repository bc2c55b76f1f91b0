import DataSources
import JSONKit
import JSONRPC

/// `initialize`: the first request of a session.
enum InitializeRequest: AnsweredAtOnce {
    static let name = "initialize"
    typealias Params = InitializeParams
    typealias Result = InitializeResult

    static func handle(_ daemon: Daemon, _ params: InitializeParams) throws -> InitializeResult {
        guard daemon.lifecycle == .uninitialized else {
            throw ResponseError.invalidRequest("\"initialize\" was already received; send it once per session")
        }
        if params.clientName != nil || params.clientVersion != nil {
            daemon.logger.info("client", metadata: ["name": "\(params.clientName ?? "?")", "version": "\(params.clientVersion ?? "?")"])
        }
        daemon.changeValuesLimit = params.changeValuesLimit
        daemon.sendsLoadStates = params.loadStates
        daemon.loader.userAgent = DaemonInfo.userAgent(clientName: params.clientName, clientVersion: params.clientVersion)
        daemon.lifecycle = .running
        return InitializeResult(
            methods: daemon.methods.names, sourceKinds: daemon.registry.kinds,
            maxMessageSize: daemon.options.maximumMessageSize, changeValues: true)
    }

    /// This method in Protocol/openrpc.json (`datasourced schema` prints the whole document).
    static let openRPC = #"""
        {
          "name": "initialize",
          "summary": "the first request of a session",
          "paramStructure": "by-name",
          "params": [
            {
              "name": "clientInfo",
              "schema": {
                "type": "object",
                "properties": {
                  "name": {
                    "type": "string"
                  },
                  "version": {
                    "type": "string"
                  }
                },
                "required": [],
                "additionalProperties": false
              },
              "required": false
            },
            {
              "name": "capabilities",
              "schema": {
                "type": "object",
                "properties": {
                  "changeValues": {
                    "anyOf": [
                      {
                        "type": "boolean"
                      },
                      {
                        "type": "object",
                        "properties": {
                          "maxBytes": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": 67108864
                          }
                        },
                        "required": [],
                        "additionalProperties": false
                      }
                    ]
                  },
                  "loadStates": {
                    "type": "boolean",
                    "description": "send dataSource/didChangeLoadState (default false)"
                  }
                },
                "additionalProperties": true,
                "description": "unknown client capabilities are ignored"
              },
              "required": false
            }
          ],
          "result": {
            "name": "initializeResult",
            "schema": {
              "type": "object",
              "properties": {
                "protocolVersion": {
                  "type": "string"
                },
                "serverInfo": {
                  "type": "object",
                  "properties": {
                    "name": {
                      "type": "string"
                    },
                    "version": {
                      "type": "string"
                    }
                  },
                  "required": [
                    "name",
                    "version"
                  ],
                  "additionalProperties": false
                },
                "capabilities": {
                  "type": "object",
                  "properties": {
                    "methods": {
                      "type": "array",
                      "items": {
                        "type": "string"
                      }
                    },
                    "sourceKinds": {
                      "type": "array",
                      "items": {
                        "type": "string"
                      }
                    },
                    "notifications": {
                      "type": "array",
                      "items": {
                        "type": "string"
                      }
                    },
                    "batches": {
                      "type": "boolean"
                    },
                    "cancelRequest": {
                      "type": "boolean"
                    },
                    "maxMessageSize": {
                      "type": "integer",
                      "minimum": 1
                    },
                    "changeValues": {
                      "type": "boolean"
                    }
                  },
                  "required": [
                    "methods",
                    "sourceKinds",
                    "notifications",
                    "batches",
                    "cancelRequest",
                    "maxMessageSize",
                    "changeValues"
                  ],
                  "additionalProperties": false
                }
              },
              "required": [
                "protocolVersion",
                "serverInfo",
                "capabilities"
              ],
              "additionalProperties": false
            }
          },
          "errors": [
            {
              "$ref": "#/components/errors/InvalidParams"
            }
          ]
        }
        """#
}

/// `{clientInfo?: {name?, version?}, capabilities?: {changeValues?, loadStates?}}`.
struct InitializeParams: WireParams {
    var clientName: String?
    var clientVersion: String?
    /// The most bytes of row values a `didChange` may carry; nil: none.
    var changeValuesLimit: Int?
    /// Whether the client asked for `dataSource/didChangeLoadState`.
    var loadStates = false

    static let defaultChangeValuesLimit = 1 << 20
    static let maximumChangeValuesLimit = 64 << 20

    init(_ reader: inout ObjectReader) throws(FieldError) {
        if var client = try reader.optionalObject("clientInfo", expected: "an object {name?, version?}") {
            clientName = try client.optionalString("name")
            clientVersion = try client.optionalString("version")
            try client.finish()
        }
        // Client capabilities this daemon does not know are ignored, as in LSP: a newer
        // client must be able to talk to an older daemon.
        if var capabilities = try reader.optionalObject("capabilities", expected: "an object of client capabilities") {
            if let value = capabilities.value("changeValues") {
                let field = capabilities.path("changeValues")
                if let enabled = value.boolValue {
                    changeValuesLimit = enabled ? Self.defaultChangeValuesLimit : nil
                } else {
                    var options = try ObjectReader(value, field: field, expected: "a boolean or an object {maxBytes?}")
                    changeValuesLimit =
                        try options.optionalInteger("maxBytes", in: 0...Self.maximumChangeValuesLimit) ?? Self.defaultChangeValuesLimit
                    try options.finish()
                }
            }
            loadStates = try capabilities.optionalBool("loadStates") ?? false
        }
    }
}

struct InitializeResult: WireEncodable {
    let methods: [String]
    let sourceKinds: [String]
    let maxMessageSize: Int
    let changeValues: Bool

    var json: JSON {
        [
            "protocolVersion": JSON(DaemonInfo.protocolVersion),
            "serverInfo": ["name": JSON(DaemonInfo.name), "version": JSON(DaemonInfo.version)],
            "capabilities": .object([
                ("methods", .array(methods.map { JSON($0) })),
                ("sourceKinds", .array(sourceKinds.map { JSON($0) })),
                ("notifications", .array(NotificationName.allCases.map { JSON($0.rawValue) })),
                ("batches", true),
                ("cancelRequest", true),
                ("maxMessageSize", JSON(maxMessageSize)),
                ("changeValues", JSON(changeValues)),
            ]),
        ]
    }
}
