import JSONKit
import WireSchema

/// Protocol/openrpc.json, assembled from each method's declaration (`RequestMethod.openRPC`),
/// the notifications (`NotificationName.openRPC`) and the shared components. `datasourced schema`
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
            ("methods", .array(ProtocolMethods.all.map { $0.openRPC })),
            ("x-notifications", .array(NotificationName.allCases.map(\.openRPC))),
            (
                "components",
                .object([
                    ("schemas", .object(SchemaComponents.schemas.map { ($0.name, $0.schema.json) })),
                    ("errors", .object(ErrorComponent.allCases.map { ($0.name, $0.json) })),
                ])
            ),
        ])
    }

}
