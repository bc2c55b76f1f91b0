import JSONKit

/// Protocol/openrpc.json, assembled from each method's file (`RequestMethod.openRPC`), the
/// notifications (`NotificationName.openRPC`) and the shared components. `datasourced schema`
/// prints it; a test fails when the committed file differs, so the document cannot drift from
/// the code that decodes and answers.
package enum OpenRPCDocument {
    /// The document as the committed file holds it: two-space indentation, a final newline.
    package static var text: String { json.text(format: .pretty) + "\n" }

    static var json: JSON {
        .object([
            ("openrpc", "1.3.2"),
            (
                "info",
                .object([
                    ("title", JSON(DaemonInfo.name)),
                    ("version", JSON(DaemonInfo.protocolVersion)),
                    (
                        "description",
                        """
                        Instant Cocoa-style data sources over JSON-RPC 2.0 on stdio (LSP framing). Protocol.md is the readable \
                        contract; this document is its machine-checked form. info.version is the protocolVersion initialize reports.
                        """
                    ),
                ])
            ),
            ("methods", .array(ProtocolMethods.all.map { parsed($0.openRPC, "method \($0.name)") })),
            ("x-notifications", .array(NotificationName.allCases.map { parsed($0.openRPC, "notification \($0.rawValue)") })),
            (
                "components",
                .object([
                    ("schemas", .object(SchemaComponents.schemas.map { ($0.name, parsed($0.schema, "schema \($0.name)")) })),
                    ("errors", .object(SchemaComponents.errors.map { ($0.name, parsed($0.error, "error \($0.name)")) })),
                ])
            ),
        ])
    }

    /// The fragments are literals in this module: one that does not parse is a bug the tests
    /// catch at once, never input.
    private static func parsed(_ text: String, _ what: String) -> JSON {
        do {
            return try JSON.parse(text)
        } catch {
            preconditionFailure("the OpenRPC text of \(what) is not JSON: \(error)")
        }
    }
}
