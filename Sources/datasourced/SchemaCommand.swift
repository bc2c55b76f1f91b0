import ArgumentParser
import Daemon
import Replay

/// `datasourced schema`: Protocol/openrpc.json as this build speaks it.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the OpenRPC document of the protocol this daemon speaks (Protocol/openrpc.json).",
        discussion: """
            The document is assembled from the code that decodes and answers each method, so it is what the daemon \
            does: `datasourced schema > Protocol/openrpc.json` after changing a method, and the tests fail until the \
            committed file matches.
            """)

    func run() {
        // The document ends with its own newline.
        var text = OpenRPCDocument.text
        text.removeLast()
        Replay.writeLine(text)
    }
}
