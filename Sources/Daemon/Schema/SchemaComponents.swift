import JSONKit

// The schemas and errors that methods and notifications refer to (`#/components/...` in
// Protocol/openrpc.json), each beside the others so that a shared shape is written once.

enum SchemaComponents {
    /// `components.schemas`, in the document's order.
    static let schemas: [(name: String, schema: String)] = [
        (
            "SourceName",
            #"""
            {
              "type": "string",
              "description": "the name of a source"
            }
            """#
        ),
        (
            "IndexPath",
            #"""
            {
              "type": "array",
              "items": {
                "type": "integer",
                "minimum": 0
              },
              "minItems": 2,
              "maxItems": 2,
              "description": "[section, item]"
            }
            """#
        ),
        (
            "ChangedRows",
            #"""
            {
              "anyOf": [
                {
                  "$ref": "#/components/schemas/IndexPath"
                },
                {
                  "type": "array",
                  "items": {
                    "type": "integer",
                    "minimum": 0
                  },
                  "minItems": 3,
                  "maxItems": 3,
                  "description": "[section, item, count]: count (2 or more) consecutive rows from item, sent only to clients with the changeRanges capability"
                }
              ]
            }
            """#
        ),
        (
            "PageRequest",
            #"""
            {
              "anyOf": [
                {
                  "type": "null"
                },
                {
                  "type": "object",
                  "properties": {
                    "page": {
                      "type": "integer"
                    }
                  },
                  "required": [
                    "page"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "offset": {
                      "type": "integer",
                      "minimum": 0
                    }
                  },
                  "required": [
                    "offset"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "cursor": {
                      "type": "string"
                    }
                  },
                  "required": [
                    "cursor"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "url": {
                      "type": "string"
                    }
                  },
                  "required": [
                    "url"
                  ],
                  "additionalProperties": false
                }
              ]
            }
            """#
        ),
        (
            "Refusal",
            #"""
            {
              "description": "A request that did nothing, and why: a page asked for where none is, a retry with no failed direction",
              "type": "object",
              "properties": {
                "started": {
                  "const": false
                },
                "reason": {
                  "type": "string"
                }
              },
              "required": [
                "started",
                "reason"
              ],
              "additionalProperties": false
            }
            """#
        ),
        (
            "NextPageResult",
            #"""
            {
              "description": "The result of fetchNextPage and fetchPreviousPage: whether the page was asked for, and if not why",
              "anyOf": [
                {
                  "type": "object",
                  "properties": {
                    "started": {
                      "const": true
                    }
                  },
                  "required": [
                    "started"
                  ],
                  "additionalProperties": false
                },
                {
                  "$ref": "#/components/schemas/Refusal"
                }
              ]
            }
            """#
        ),
        (
            "Row",
            #"""
            {
              "description": "any JSON value: an object the source holds, or a placeholder row",
              "anyOf": [
                {
                  "not": {
                    "type": "object",
                    "required": [
                      "$placeholder"
                    ]
                  }
                },
                {
                  "$ref": "#/components/schemas/Placeholder"
                }
              ]
            }
            """#
        ),
        (
            "Placeholder",
            #"""
            {
              "oneOf": [
                {
                  "type": "object",
                  "properties": {
                    "$placeholder": {
                      "const": "loading"
                    }
                  },
                  "required": [
                    "$placeholder"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "$placeholder": {
                      "const": "noResults"
                    }
                  },
                  "required": [
                    "$placeholder"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "$placeholder": {
                      "const": "error"
                    },
                    "error": {
                      "$ref": "#/components/schemas/FetchError"
                    }
                  },
                  "required": [
                    "$placeholder",
                    "error"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "description": "a counted list's row not loaded yet, at its index",
                  "properties": {
                    "$placeholder": {
                      "const": "unloaded"
                    },
                    "index": {
                      "type": "integer",
                      "minimum": 0
                    }
                  },
                  "required": [
                    "$placeholder",
                    "index"
                  ],
                  "additionalProperties": false
                }
              ]
            }
            """#
        ),
        (
            "ChangeSet",
            #"""
            {
              "type": "object",
              "properties": {
                "deletedSections": {
                  "type": "array",
                  "items": {
                    "type": "integer",
                    "minimum": 0
                  }
                },
                "insertedSections": {
                  "type": "array",
                  "items": {
                    "type": "integer",
                    "minimum": 0
                  }
                },
                "deleted": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ChangedRows"
                  }
                },
                "inserted": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ChangedRows"
                  }
                },
                "moved": {
                  "type": "array",
                  "items": {
                    "type": "object",
                    "properties": {
                      "from": {
                        "$ref": "#/components/schemas/IndexPath"
                      },
                      "to": {
                        "$ref": "#/components/schemas/IndexPath"
                      }
                    },
                    "required": [
                      "from",
                      "to"
                    ],
                    "additionalProperties": false
                  }
                },
                "updated": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/ChangedRows"
                  }
                }
              },
              "required": [
                "deletedSections",
                "insertedSections",
                "deleted",
                "inserted",
                "moved",
                "updated"
              ],
              "additionalProperties": false
            }
            """#
        ),
        (
            "FetchError",
            #"""
            {
              "type": "object",
              "properties": {
                "kind": {
                  "enum": [
                    "http",
                    "timeout",
                    "transport",
                    "decode",
                    "keyPath",
                    "mapping",
                    "cancelled",
                    "tooLarge",
                    "loop",
                    "crossOrigin",
                    "tls",
                    "proxy",
                    "outOfRange",
                    "credentialNotAllowed"
                  ]
                },
                "message": {
                  "type": "string"
                },
                "status": {
                  "type": "integer",
                  "minimum": 100,
                  "maximum": 599
                },
                "url": {
                  "type": "string"
                },
                "finalURL": {
                  "type": "string"
                },
                "keyPath": {
                  "type": "string"
                },
                "index": {
                  "type": "integer",
                  "minimum": 0
                },
                "field": {
                  "type": "string"
                },
                "expected": {
                  "type": "string"
                },
                "got": {
                  "type": "string"
                },
                "line": {
                  "type": "integer"
                },
                "column": {
                  "type": "integer"
                },
                "position": {
                  "type": "integer"
                },
                "maxDepth": {
                  "type": "integer",
                  "minimum": 1
                },
                "maxBodyBytes": {
                  "type": "integer",
                  "minimum": 1
                },
                "maxObjectsPerPage": {
                  "type": "integer",
                  "minimum": 1
                },
                "serverMessage": {
                  "type": "string"
                },
                "body": {
                  "type": "string",
                  "maxLength": 2048
                },
                "retryAfterSeconds": {
                  "type": "number",
                  "minimum": 0
                },
                "reason": {
                  "enum": [
                    "first",
                    "page",
                    "offset",
                    "cursor",
                    "url",
                    "noNewObjects",
                    "maxPages"
                  ]
                },
                "pagesLoaded": {
                  "type": "integer",
                  "minimum": 0
                },
                "source": {
                  "type": "string",
                  "description": "the child that failed, when a sectioned source passes its child's failure on"
                },
                "credential": {
                  "description": "(credentialNotAllowed) the variable not sent, or the file as it is opened (~ expanded, symbolic links resolved): allowCredential takes it with origin",
                  "oneOf": [
                    {
                      "type": "object",
                      "properties": {
                        "env": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "env"
                      ],
                      "additionalProperties": false
                    },
                    {
                      "type": "object",
                      "properties": {
                        "file": {
                          "type": "string"
                        }
                      },
                      "required": [
                        "file"
                      ],
                      "additionalProperties": false
                    }
                  ]
                },
                "origin": {
                  "type": "string",
                  "description": "(credentialNotAllowed) where the value would have gone: scheme://host, with :port when not the default"
                },
                "rateLimited": {
                  "const": true,
                  "description": "(http) a 429, or a 403 whose headers say the rate limit is spent or ask to retry later; absent otherwise"
                }
              },
              "required": [
                "kind",
                "message"
              ],
              "additionalProperties": false,
              "description": "why a load failed (dataSource/failedWithError, error rows, lastError)"
            }
            """#
        ),
        (
            "LoadFailure",
            #"""
            {
              "anyOf": [
                {
                  "$ref": "#/components/schemas/FetchError"
                },
                {
                  "type": "object",
                  "properties": {
                    "kind": {
                      "const": "children"
                    },
                    "message": {
                      "type": "string"
                    },
                    "failures": {
                      "type": "array",
                      "items": {
                        "type": "object",
                        "properties": {
                          "source": {
                            "type": "string"
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
                  },
                  "required": [
                    "kind",
                    "message",
                    "failures"
                  ],
                  "additionalProperties": false
                }
              ]
            }
            """#
        ),
        (
            "SortDescriptor",
            #"""
            {
              "type": "object",
              "properties": {
                "keyPath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "a dot-separated key path; a component of digits also indexes arrays"
                },
                "ascending": {
                  "type": "boolean"
                }
              },
              "required": [
                "keyPath"
              ],
              "additionalProperties": false
            }
            """#
        ),
        (
            "RemoteConfiguration",
            #"""
            {
              "type": "object",
              "properties": {
                "baseURL": {
                  "type": "string",
                  "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"
                },
                "headers": {
                  "$ref": "#/components/schemas/Headers"
                },
                "timeoutSeconds": {
                  "type": "number",
                  "exclusiveMinimum": 0,
                  "maximum": 86400
                },
                "tls": {
                  "$ref": "#/components/schemas/TLSFiles"
                },
                "compression": {
                  "type": "boolean",
                  "description": "false: no Accept-Encoding is sent (a gzip or deflate body is still decoded); default true"
                },
                "proxy": {
                  "anyOf": [
                    {
                      "type": "string",
                      "pattern": "^[Hh][Tt][Tt][Pp]://"
                    },
                    {
                      "type": "null"
                    }
                  ],
                  "description": "http://[user:password@]host[:port], or null for a direct connection; absent: from the daemon's environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY)"
                }
              },
              "required": [
                "baseURL"
              ],
              "additionalProperties": false
            }
            """#
        ),
        (
            "Headers",
            #"""
            {
              "type": "object",
              "additionalProperties": {
                "anyOf": [
                  {
                    "type": "string"
                  },
                  {
                    "type": "object",
                    "properties": {
                      "env": {
                        "type": "string",
                        "minLength": 1,
                        "description": "a variable of the daemon's environment, read when each request is made"
                      },
                      "prefix": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "env"
                    ],
                    "additionalProperties": false
                  },
                  {
                    "type": "object",
                    "properties": {
                      "file": {
                        "type": "string",
                        "minLength": 1,
                        "description": "an absolute path or one from ~/: a regular file of at most 65536 bytes, read when each request is made, its trailing line break removed"
                      },
                      "prefix": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "file"
                    ],
                    "additionalProperties": false
                  }
                ],
                "description": "a string, or where the value is read from (Protocol.md, \"Credentials from the environment or a file\")"
              }
            }
            """#
        ),
        (
            "QueryParameters",
            #"""
            {
              "type": "object",
              "additionalProperties": {
                "type": [
                  "string",
                  "number",
                  "boolean"
                ]
              }
            }
            """#
        ),
        (
            "TLSFiles",
            #"""
            {
              "type": "object",
              "description": "PEM files for HTTPS: caFile is trusted in addition to the base roots (SSL_CERT_FILE / SSL_CERT_DIR, else the system store); certificateFile and keyFile, given together, are the client certificate. Paths are absolute or start with ~/; each file is checked at createSource.",
              "properties": {
                "caFile": {
                  "type": "string",
                  "minLength": 1
                },
                "certificateFile": {
                  "type": "string",
                  "minLength": 1
                },
                "keyFile": {
                  "type": "string",
                  "minLength": 1
                }
              },
              "dependentRequired": {
                "certificateFile": [
                  "keyFile"
                ],
                "keyFile": [
                  "certificateFile"
                ]
              },
              "additionalProperties": false
            }
            """#
        ),
        (
            "PlaceholderStorageOptions",
            #"""
            {
              "anyOf": [
                {
                  "type": "integer",
                  "minimum": 0,
                  "maximum": 14
                },
                {
                  "type": "array",
                  "items": {
                    "enum": [
                      "loading",
                      "noResults",
                      "errors"
                    ]
                  }
                }
              ]
            }
            """#
        ),
        (
            "Limits",
            #"""
            {
              "type": "object",
              "properties": {
                "maxBodyBytes": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1073741824
                },
                "maxDepth": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 2048
                },
                "maxObjectsPerPage": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 50000000
                }
              },
              "required": [],
              "additionalProperties": false
            }
            """#
        ),
        (
            "FieldSpec",
            #"""
            {
              "anyOf": [
                {
                  "type": "string"
                },
                {
                  "type": "object",
                  "properties": {
                    "keyPath": {
                      "type": "string",
                      "minLength": 1,
                      "description": "a dot-separated key path; a component of digits also indexes arrays"
                    },
                    "type": {
                      "enum": [
                        "any",
                        "string",
                        "number",
                        "integer",
                        "boolean",
                        "date",
                        "url",
                        "object",
                        "array"
                      ]
                    },
                    "default": {},
                    "mapping": {
                      "$ref": "#/components/schemas/Mapping"
                    },
                    "items": {
                      "$ref": "#/components/schemas/FieldSpec"
                    }
                  },
                  "required": [],
                  "additionalProperties": false
                }
              ]
            }
            """#
        ),
        (
            "Mapping",
            #"""
            {
              "type": "object",
              "additionalProperties": {
                "$ref": "#/components/schemas/FieldSpec"
              }
            }
            """#
        ),
        (
            "Pagination",
            #"""
            {
              "type": "object",
              "properties": {
                "strategy": {
                  "enum": [
                    "pageNumber",
                    "offset",
                    "cursor",
                    "nextURL",
                    "linkHeader"
                  ]
                },
                "offsetKey": {
                  "type": "string",
                  "minLength": 1
                },
                "limitKey": {
                  "type": "string",
                  "minLength": 1
                },
                "nextOffsetPath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "a dot-separated key path; a component of digits also indexes arrays"
                },
                "cursorKey": {
                  "type": "string",
                  "minLength": 1
                },
                "cursorPath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "a dot-separated key path; a component of digits also indexes arrays"
                },
                "cursorFromLastObject": {
                  "type": "string",
                  "minLength": 1,
                  "description": "a dot-separated key path; a component of digits also indexes arrays"
                },
                "hasMorePath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "a dot-separated key path; a component of digits also indexes arrays"
                },
                "prevCursorPath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "(cursor) where a response gives the cursor of the page before it; a dot-separated key path"
                },
                "previousURLPath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "(nextURL) where a response gives the URL of the page before it; a dot-separated key path"
                },
                "nextURLPath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "a dot-separated key path; a component of digits also indexes arrays"
                },
                "totalPath": {
                  "type": "string",
                  "minLength": 1,
                  "description": "a dot-separated key path; a component of digits also indexes arrays"
                },
                "totalHeader": {
                  "type": "string",
                  "minLength": 1
                },
                "maxPages": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000000
                },
                "maxPagesWithoutNewObjects": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 1000
                },
                "endOnNotFound": {
                  "type": "boolean"
                },
                "allowCrossOrigin": {
                  "type": "boolean"
                },
                "duplicates": {
                  "enum": [
                    "dropLater",
                    "keep"
                  ]
                },
                "retryAfter": {
                  "type": "object",
                  "properties": {
                    "maxRetries": {
                      "type": "integer",
                      "minimum": 0,
                      "maximum": 10
                    },
                    "maxDelaySeconds": {
                      "type": "number",
                      "minimum": 0,
                      "maximum": 3600
                    }
                  },
                  "required": [],
                  "additionalProperties": false
                },
                "metadataHeader": {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 256,
                  "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
                  "description": "a response header holding the page metadata as JSON (flask-smorest's X-Pagination)"
                }
              },
              "required": [],
              "additionalProperties": false
            }
            """#
        ),
        (
            "SourceSpec",
            #"""
            {
              "description": "createSource params, by kind",
              "oneOf": [
                {
                  "type": "object",
                  "properties": {
                    "name": {
                      "type": "string",
                      "minLength": 1
                    },
                    "identityKey": {
                      "anyOf": [
                        {
                          "type": "string",
                          "minLength": 1,
                          "description": "a dot-separated key path; a component of digits also indexes arrays"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    },
                    "kind": {
                      "const": "simple"
                    },
                    "objects": {
                      "type": "array"
                    }
                  },
                  "required": [
                    "name",
                    "kind"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "name": {
                      "type": "string",
                      "minLength": 1
                    },
                    "identityKey": {
                      "anyOf": [
                        {
                          "type": "string",
                          "minLength": 1,
                          "description": "a dot-separated key path; a component of digits also indexes arrays"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    },
                    "kind": {
                      "const": "sectioned"
                    },
                    "source": {
                      "type": "string"
                    },
                    "sectioningKey": {
                      "type": "string",
                      "minLength": 1,
                      "description": "a dot-separated key path; a component of digits also indexes arrays"
                    },
                    "sortDescriptors": {
                      "type": "array",
                      "items": {
                        "$ref": "#/components/schemas/SortDescriptor"
                      }
                    }
                  },
                  "required": [
                    "name",
                    "kind",
                    "source",
                    "sectioningKey"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "name": {
                      "type": "string",
                      "minLength": 1
                    },
                    "identityKey": {
                      "anyOf": [
                        {
                          "type": "string",
                          "minLength": 1,
                          "description": "a dot-separated key path; a component of digits also indexes arrays"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    },
                    "kind": {
                      "const": "multi"
                    },
                    "sources": {
                      "type": "array",
                      "items": {
                        "type": "string"
                      }
                    },
                    "preserveSections": {
                      "type": "boolean"
                    }
                  },
                  "required": [
                    "name",
                    "kind",
                    "sources"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "name": {
                      "type": "string",
                      "minLength": 1
                    },
                    "identityKey": {
                      "anyOf": [
                        {
                          "type": "string",
                          "minLength": 1,
                          "description": "a dot-separated key path; a component of digits also indexes arrays"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    },
                    "kind": {
                      "const": "remote"
                    },
                    "remoteConfiguration": {
                      "$ref": "#/components/schemas/RemoteConfiguration"
                    },
                    "apiPath": {
                      "type": "string"
                    },
                    "queryParameters": {
                      "$ref": "#/components/schemas/QueryParameters"
                    },
                    "keyPath": {
                      "type": "string"
                    },
                    "mapping": {
                      "$ref": "#/components/schemas/Mapping"
                    },
                    "placeholderStorageOptions": {
                      "$ref": "#/components/schemas/PlaceholderStorageOptions"
                    },
                    "limits": {
                      "$ref": "#/components/schemas/Limits"
                    },
                    "cache": {
                      "$ref": "#/components/schemas/CacheSettings"
                    },
                    "refreshIntervalSeconds": {
                      "anyOf": [
                        {
                          "type": "number",
                          "minimum": 1,
                          "maximum": 86400
                        },
                        {
                          "type": "null"
                        }
                      ],
                      "description": "seconds between refreshes of a live list; null: none"
                    }
                  },
                  "required": [
                    "name",
                    "kind",
                    "remoteConfiguration",
                    "apiPath"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "name": {
                      "type": "string",
                      "minLength": 1
                    },
                    "identityKey": {
                      "anyOf": [
                        {
                          "type": "string",
                          "minLength": 1,
                          "description": "a dot-separated key path; a component of digits also indexes arrays"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    },
                    "kind": {
                      "const": "paginated"
                    },
                    "remoteConfiguration": {
                      "$ref": "#/components/schemas/RemoteConfiguration"
                    },
                    "apiPath": {
                      "type": "string"
                    },
                    "queryParameters": {
                      "$ref": "#/components/schemas/QueryParameters"
                    },
                    "keyPath": {
                      "type": "string"
                    },
                    "mapping": {
                      "$ref": "#/components/schemas/Mapping"
                    },
                    "placeholderStorageOptions": {
                      "$ref": "#/components/schemas/PlaceholderStorageOptions"
                    },
                    "limits": {
                      "$ref": "#/components/schemas/Limits"
                    },
                    "paginatorKeys": {
                      "type": "object",
                      "properties": {
                        "pageSize": {
                          "type": "string",
                          "minLength": 1
                        },
                        "currentPage": {
                          "type": "string",
                          "minLength": 1
                        },
                        "numberOfPages": {
                          "type": "string",
                          "minLength": 1
                        },
                        "numberOfTotalObjects": {
                          "type": "string",
                          "minLength": 1
                        }
                      },
                      "required": [],
                      "additionalProperties": false
                    },
                    "requestKeys": {
                      "type": "object",
                      "properties": {
                        "currentPage": {
                          "type": "string",
                          "minLength": 1
                        },
                        "pageSize": {
                          "type": "string",
                          "minLength": 1
                        }
                      },
                      "required": [],
                      "additionalProperties": false
                    },
                    "pageSize": {
                      "type": "integer",
                      "minimum": 1,
                      "maximum": 2147483648
                    },
                    "firstPage": {
                      "type": "integer",
                      "minimum": 0,
                      "maximum": 2147483648
                    },
                    "initialPage": {
                      "type": "integer",
                      "minimum": 0,
                      "maximum": 2147483648,
                      "description": "(pageNumber) the page a run starts at, firstPage or later"
                    },
                    "initialOffset": {
                      "type": "integer",
                      "minimum": 0,
                      "maximum": 9007199254740992,
                      "description": "(offset) the offset a run starts at"
                    },
                    "initialCursor": {
                      "type": "string",
                      "minLength": 1,
                      "description": "(cursor) the cursor a run starts at"
                    },
                    "window": {
                      "type": "object",
                      "properties": {
                        "maxPages": {
                          "type": "integer",
                          "minimum": 1,
                          "maximum": 1000000
                        },
                        "maxObjects": {
                          "type": "integer",
                          "minimum": 1,
                          "maximum": 2147483648
                        }
                      },
                      "minProperties": 1,
                      "additionalProperties": false,
                      "description": "the most pages and objects held; pages far from the rows displayed are dropped, whole"
                    },
                    "placeholders": {
                      "enum": [
                        "trailing",
                        "counted"
                      ],
                      "description": "counted: with a known total the list has its full size at once, unloaded rows being {\"$placeholder\": \"unloaded\", \"index\": N}"
                    },
                    "jumpThreshold": {
                      "type": "integer",
                      "minimum": 1,
                      "maximum": 2147483648,
                      "description": "rows: a displayed unloaded row farther than this from the loaded ones loads its own page (a jump); default two pages"
                    },
                    "metadataKeyPath": {
                      "type": "string"
                    },
                    "prefetchDistance": {
                      "type": "integer",
                      "minimum": 0,
                      "maximum": 1000000
                    },
                    "pagination": {
                      "$ref": "#/components/schemas/Pagination"
                    },
                    "cache": {
                      "$ref": "#/components/schemas/CacheSettings"
                    },
                    "refreshIntervalSeconds": {
                      "anyOf": [
                        {
                          "type": "number",
                          "minimum": 1,
                          "maximum": 86400
                        },
                        {
                          "type": "null"
                        }
                      ],
                      "description": "seconds between refreshes of a live list; null: none"
                    }
                  },
                  "required": [
                    "name",
                    "kind",
                    "remoteConfiguration",
                    "apiPath"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "name": {
                      "type": "string",
                      "minLength": 1
                    },
                    "identityKey": {
                      "anyOf": [
                        {
                          "type": "string",
                          "minLength": 1,
                          "description": "a dot-separated key path; a component of digits also indexes arrays"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    },
                    "kind": {
                      "const": "filtered"
                    },
                    "source": {
                      "type": "string"
                    },
                    "filter": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/Predicate"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    },
                    "match": {
                      "anyOf": [
                        {
                          "$ref": "#/components/schemas/MatchQuery"
                        },
                        {
                          "type": "null"
                        }
                      ]
                    }
                  },
                  "required": [
                    "name",
                    "kind",
                    "source"
                  ],
                  "additionalProperties": false
                }
              ]
            }
            """#
        ),
        (
            "Predicate",
            #"""
            {
              "description": "a filter: a comparison, or and/or/not of predicates, nested at most 32 levels deep",
              "oneOf": [
                {
                  "type": "object",
                  "properties": {
                    "keyPath": {
                      "type": "string",
                      "minLength": 1,
                      "description": "a dot-separated key path; a component of digits also indexes arrays"
                    },
                    "op": {
                      "enum": [
                        "eq",
                        "ne",
                        "lt",
                        "le",
                        "gt",
                        "ge",
                        "in",
                        "contains",
                        "prefix",
                        "exists"
                      ]
                    },
                    "value": {
                      "description": "lt, le, gt, ge: a number or a string; in: an array; prefix: a string; exists: a boolean (default true)"
                    }
                  },
                  "required": [
                    "keyPath",
                    "op"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "and": {
                      "type": "array",
                      "items": {
                        "$ref": "#/components/schemas/Predicate"
                      }
                    }
                  },
                  "required": [
                    "and"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "or": {
                      "type": "array",
                      "items": {
                        "$ref": "#/components/schemas/Predicate"
                      }
                    }
                  },
                  "required": [
                    "or"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "not": {
                      "$ref": "#/components/schemas/Predicate"
                    }
                  },
                  "required": [
                    "not"
                  ],
                  "additionalProperties": false
                }
              ]
            }
            """#
        ),
        (
            "MatchQuery",
            #"""
            {
              "type": "object",
              "description": "a fuzzy query over the strings at one or more key paths, scored as fzf's v2 algorithm",
              "properties": {
                "query": {
                  "type": "string",
                  "maxLength": 256
                },
                "keyPaths": {
                  "type": "array",
                  "minItems": 1,
                  "items": {
                    "type": "string",
                    "minLength": 1,
                    "description": "a dot-separated key path; a component of digits also indexes arrays"
                  }
                }
              },
              "required": [
                "query",
                "keyPaths"
              ],
              "additionalProperties": false
            }
            """#
        ),
        (
            "Matches",
            #"""
            {
              "description": "withMatches: how a row matches its filtered source's query; null for a source without a query, and for placeholders",
              "anyOf": [
                {
                  "type": "object",
                  "properties": {
                    "score": {
                      "type": "integer"
                    },
                    "keyPath": {
                      "type": "string",
                      "description": "the key path whose string gave the best score"
                    },
                    "positions": {
                      "type": "array",
                      "items": {
                        "type": "integer",
                        "minimum": 0
                      },
                      "description": "the matched characters: indexes of Unicode scalars (code points) in that string, ascending"
                    }
                  },
                  "required": [
                    "score",
                    "keyPath",
                    "positions"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "null"
                }
              ]
            }
            """#
        ),
        (
            "LoadState",
            #"""
            {
              "anyOf": [
                {
                  "type": "object",
                  "properties": {
                    "state": {
                      "enum": [
                        "idle",
                        "loading",
                        "endReached"
                      ]
                    }
                  },
                  "required": [
                    "state"
                  ],
                  "additionalProperties": false
                },
                {
                  "type": "object",
                  "properties": {
                    "state": {
                      "const": "error"
                    },
                    "error": {
                      "$ref": "#/components/schemas/FetchError"
                    }
                  },
                  "required": [
                    "state",
                    "error"
                  ],
                  "additionalProperties": false
                }
              ]
            }
            """#
        ),
        (
            "LoadStates",
            #"""
            {
              "type": "object",
              "properties": {
                "refresh": {
                  "$ref": "#/components/schemas/LoadState"
                },
                "prepend": {
                  "$ref": "#/components/schemas/LoadState"
                },
                "append": {
                  "$ref": "#/components/schemas/LoadState"
                }
              },
              "required": [
                "refresh",
                "prepend",
                "append"
              ],
              "additionalProperties": false,
              "description": "a paginated source's load state in each direction: the first page of a run, the page before the first loaded, the page after the last"
            }
            """#
        ),
        (
            "SourceDescription",
            #"""
            {
              "type": "object",
              "properties": {
                "name": {
                  "type": "string"
                },
                "kind": {
                  "enum": [
                    "simple",
                    "sectioned",
                    "multi",
                    "remote",
                    "paginated",
                    "filtered"
                  ]
                },
                "numberOfSections": {
                  "type": "integer",
                  "minimum": 0
                },
                "sectionTitles": {
                  "type": "array"
                },
                "counts": {
                  "type": "array",
                  "items": {
                    "type": "integer",
                    "minimum": 0
                  }
                },
                "isFetching": {
                  "type": "boolean"
                },
                "revision": {
                  "type": "integer",
                  "minimum": 0
                },
                "identityKey": {
                  "type": "string"
                },
                "children": {
                  "type": "array",
                  "items": {
                    "type": "string"
                  }
                },
                "source": {
                  "type": "string"
                },
                "sectioningKey": {
                  "type": "string"
                },
                "sortDescriptors": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/SortDescriptor"
                  }
                },
                "sources": {
                  "type": "array",
                  "items": {
                    "type": "string"
                  }
                },
                "preserveSections": {
                  "type": "boolean"
                },
                "filter": {
                  "anyOf": [
                    {
                      "$ref": "#/components/schemas/Predicate"
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "match": {
                  "anyOf": [
                    {
                      "$ref": "#/components/schemas/MatchQuery"
                    },
                    {
                      "type": "null"
                    }
                  ]
                },
                "remoteConfiguration": {
                  "type": "object",
                  "properties": {
                    "baseURL": {
                      "type": "string"
                    },
                    "headers": {
                      "type": "object",
                      "additionalProperties": {
                        "anyOf": [
                          {
                            "type": "string"
                          },
                          {
                            "type": "object",
                            "properties": {
                              "env": {
                                "type": "string"
                              },
                              "prefix": {
                                "type": "string"
                              }
                            },
                            "required": [
                              "env"
                            ],
                            "additionalProperties": false
                          },
                          {
                            "type": "object",
                            "properties": {
                              "file": {
                                "type": "string"
                              },
                              "prefix": {
                                "type": "string"
                              }
                            },
                            "required": [
                              "file"
                            ],
                            "additionalProperties": false
                          }
                        ],
                        "description": "secret values as \"<redacted>\"; values read from the environment or a file as where they come from, never the value"
                      }
                    },
                    "timeoutSeconds": {
                      "type": "number"
                    },
                    "compression": {
                      "const": false,
                      "description": "shown only when false"
                    },
                    "proxy": {
                      "anyOf": [
                        {
                          "type": "string"
                        },
                        {
                          "type": "null"
                        }
                      ],
                      "description": "shown only when given; the URL without its credentials"
                    }
                  },
                  "required": [
                    "baseURL",
                    "headers",
                    "timeoutSeconds"
                  ],
                  "additionalProperties": false
                },
                "apiPath": {
                  "type": "string"
                },
                "queryParameters": {
                  "type": "object",
                  "additionalProperties": {
                    "type": "string"
                  }
                },
                "placeholderStorageOptions": {
                  "type": "array",
                  "items": {
                    "enum": [
                      "loading",
                      "noResults",
                      "errors"
                    ]
                  }
                },
                "limits": {
                  "$ref": "#/components/schemas/Limits"
                },
                "keyPath": {
                  "type": "string"
                },
                "lastURL": {
                  "type": "string"
                },
                "lastError": {
                  "$ref": "#/components/schemas/FetchError"
                },
                "paginatorKeys": {
                  "type": "object",
                  "properties": {
                    "pageSize": {
                      "type": "string",
                      "minLength": 1
                    },
                    "currentPage": {
                      "type": "string",
                      "minLength": 1
                    },
                    "numberOfPages": {
                      "type": "string",
                      "minLength": 1
                    },
                    "numberOfTotalObjects": {
                      "type": "string",
                      "minLength": 1
                    }
                  },
                  "required": [],
                  "additionalProperties": false
                },
                "requestKeys": {
                  "type": "object",
                  "properties": {
                    "currentPage": {
                      "type": "string",
                      "minLength": 1
                    },
                    "pageSize": {
                      "type": "string",
                      "minLength": 1
                    }
                  },
                  "required": [],
                  "additionalProperties": false
                },
                "firstPage": {
                  "type": "integer",
                  "minimum": 0
                },
                "initialPage": {
                  "type": "integer",
                  "minimum": 0
                },
                "initialOffset": {
                  "type": "integer",
                  "minimum": 0
                },
                "initialCursor": {
                  "type": "string"
                },
                "window": {
                  "type": "object",
                  "properties": {
                    "maxPages": {
                      "type": "integer",
                      "minimum": 1
                    },
                    "maxObjects": {
                      "type": "integer",
                      "minimum": 1
                    }
                  },
                  "additionalProperties": false
                },
                "pagesDropped": {
                  "type": "integer",
                  "minimum": 0,
                  "description": "pages the window dropped in this run (with a window only)"
                },
                "metadataKeyPath": {
                  "type": "string"
                },
                "pagination": {
                  "$ref": "#/components/schemas/Pagination"
                },
                "prefetchDistance": {
                  "type": "integer",
                  "minimum": 0
                },
                "pageSize": {
                  "type": [
                    "integer",
                    "null"
                  ],
                  "minimum": 0
                },
                "currentPage": {
                  "type": [
                    "integer",
                    "null"
                  ],
                  "minimum": 0
                },
                "numberOfPages": {
                  "type": [
                    "integer",
                    "null"
                  ],
                  "minimum": 0
                },
                "numberOfTotalResults": {
                  "type": [
                    "integer",
                    "null"
                  ],
                  "minimum": 0
                },
                "hasMorePages": {
                  "type": "boolean"
                },
                "numberOfObjects": {
                  "type": "integer",
                  "minimum": 0
                },
                "nextPage": {
                  "$ref": "#/components/schemas/PageRequest"
                },
                "previousPage": {
                  "$ref": "#/components/schemas/PageRequest"
                },
                "pagesLoaded": {
                  "type": "integer",
                  "minimum": 0
                },
                "duplicatesDropped": {
                  "type": "integer",
                  "minimum": 0
                },
                "loadStates": {
                  "$ref": "#/components/schemas/LoadStates"
                },
                "jumpThreshold": {
                  "type": "integer",
                  "minimum": 1
                },
                "placeholders": {
                  "type": "object",
                  "properties": {
                    "requested": {
                      "enum": [
                        "trailing",
                        "counted"
                      ]
                    },
                    "inForce": {
                      "enum": [
                        "trailing",
                        "counted"
                      ]
                    },
                    "reason": {
                      "type": "string",
                      "description": "why counted placeholders, asked for, are not in force"
                    }
                  },
                  "required": [
                    "requested",
                    "inForce"
                  ],
                  "additionalProperties": false
                },
                "capabilities": {
                  "type": "object",
                  "properties": {
                    "pageBackwards": {
                      "type": "boolean"
                    },
                    "jump": {
                      "type": "boolean"
                    },
                    "countedPlaceholders": {
                      "type": "boolean"
                    },
                    "reasons": {
                      "type": "object",
                      "properties": {
                        "pageBackwards": {
                          "type": "string"
                        },
                        "jump": {
                          "type": "string"
                        }
                      },
                      "additionalProperties": false,
                      "description": "why each capability that is false is"
                    }
                  },
                  "required": [
                    "pageBackwards",
                    "jump",
                    "countedPlaceholders",
                    "reasons"
                  ],
                  "additionalProperties": false
                },
                "jumps": {
                  "type": "integer",
                  "minimum": 0,
                  "description": "jumps made: far unloaded rows displayed, each loading its page as a new run"
                },
                "cache": {
                  "type": "object",
                  "properties": {
                    "enabled": {
                      "type": "boolean"
                    },
                    "maxAgeSeconds": {
                      "type": "number",
                      "minimum": 0
                    },
                    "maxPages": {
                      "type": "integer",
                      "minimum": 1
                    },
                    "available": {
                      "type": "boolean",
                      "description": "the daemon has a usable cache file"
                    }
                  },
                  "required": [
                    "enabled",
                    "maxPages",
                    "available"
                  ],
                  "additionalProperties": false
                },
                "stale": {
                  "type": "boolean",
                  "description": "the rows shown came from the persisted cache and no response has confirmed them yet"
                },
                "cachedAt": {
                  "type": "string",
                  "format": "date-time",
                  "description": "while stale: when the cached rows were stored or last confirmed"
                },
                "refreshIntervalSeconds": {
                  "type": "number",
                  "minimum": 1,
                  "maximum": 86400
                },
                "refresh": {
                  "type": "object",
                  "properties": {
                    "intervalSeconds": {
                      "type": "number",
                      "minimum": 1
                    },
                    "nextRefreshAt": {
                      "type": "string",
                      "format": "date-time",
                      "description": "RFC 3339, UTC, to the millisecond"
                    },
                    "consecutiveFailures": {
                      "type": "integer",
                      "minimum": 0
                    },
                    "lastError": {
                      "$ref": "#/components/schemas/FetchError"
                    }
                  },
                  "required": [
                    "intervalSeconds",
                    "consecutiveFailures"
                  ],
                  "additionalProperties": false
                },
                "rateLimit": {
                  "type": "object",
                  "properties": {
                    "limit": {
                      "type": "integer",
                      "minimum": 0
                    },
                    "remaining": {
                      "type": "integer",
                      "minimum": 0
                    },
                    "resetAt": {
                      "type": "string",
                      "format": "date-time",
                      "description": "RFC 3339, UTC, to the millisecond"
                    }
                  },
                  "required": [],
                  "additionalProperties": false,
                  "description": "what the last response's rate-limit headers said; absent until one did"
                }
              },
              "required": [
                "name",
                "kind",
                "numberOfSections",
                "sectionTitles",
                "counts",
                "isFetching",
                "revision"
              ],
              "additionalProperties": false,
              "description": "describeSource; createSource answers it too"
            }
            """#
        ),
        (
            "FieldErrorData",
            #"""
            {
              "type": "object",
              "properties": {
                "field": {
                  "type": "string"
                },
                "expected": {
                  "type": "string"
                },
                "got": {}
              },
              "required": [
                "field",
                "expected",
                "got"
              ],
              "additionalProperties": true
            }
            """#
        ),
        (
            "CacheSettings",
            #"""
            {
              "type": "object",
              "description": "opt in to the persisted cache",
              "properties": {
                "enabled": {
                  "type": "boolean"
                },
                "maxAgeSeconds": {
                  "type": "number",
                  "minimum": 0,
                  "maximum": 315360000
                },
                "maxPages": {
                  "type": "integer",
                  "minimum": 1,
                  "maximum": 10000
                }
              },
              "required": [
                "enabled"
              ],
              "additionalProperties": false
            }
            """#
        ),
    ]

    /// `components.errors`, in the document's order.
    static let errors: [(name: String, error: String)] = [
        (
            "ParseError",
            #"""
            {
              "code": -32700,
              "message": "Parse error",
              "data": {
                "type": "object",
                "properties": {
                  "line": {
                    "type": "integer"
                  },
                  "column": {
                    "type": "integer"
                  },
                  "position": {
                    "type": "integer"
                  }
                },
                "required": [],
                "additionalProperties": true
              }
            }
            """#
        ),
        (
            "InvalidRequest",
            #"""
            {
              "code": -32600,
              "message": "Invalid request",
              "data": {
                "type": "object"
              }
            }
            """#
        ),
        (
            "MethodNotFound",
            #"""
            {
              "code": -32601,
              "message": "Method not found",
              "data": {
                "type": "object",
                "properties": {
                  "method": {
                    "type": "string"
                  }
                },
                "required": [
                  "method"
                ],
                "additionalProperties": false
              }
            }
            """#
        ),
        (
            "InvalidParams",
            #"""
            {
              "code": -32602,
              "message": "Invalid params",
              "data": {
                "$ref": "#/components/schemas/FieldErrorData"
              }
            }
            """#
        ),
        (
            "InternalError",
            #"""
            {
              "code": -32603,
              "message": "Internal error"
            }
            """#
        ),
        (
            "ServerNotInitialized",
            #"""
            {
              "code": -32002,
              "message": "Server not initialized",
              "data": {
                "type": "object",
                "properties": {
                  "method": {
                    "type": "string"
                  }
                },
                "required": [
                  "method"
                ],
                "additionalProperties": false
              }
            }
            """#
        ),
        (
            "RequestCancelled",
            #"""
            {
              "code": -32800,
              "message": "Request cancelled",
              "data": {
                "anyOf": [
                  {
                    "type": "object",
                    "properties": {
                      "id": {}
                    },
                    "required": [
                      "id"
                    ],
                    "additionalProperties": false
                  },
                  {
                    "type": "object",
                    "properties": {
                      "reason": {
                        "const": "shutdown"
                      }
                    },
                    "required": [
                      "reason"
                    ],
                    "additionalProperties": false
                  }
                ]
              }
            }
            """#
        ),
    ]
}
