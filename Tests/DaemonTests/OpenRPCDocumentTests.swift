@testable import Daemon
import Foundation
import JSONKit
import Testing

/// Protocol/openrpc.json is printed from the methods' files (`datasourced schema`): the
/// committed file must be exactly what this build prints, and each fragment must describe the
/// method or notification it sits beside.
@Suite struct OpenRPCDocumentTests {
    static let committedPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Protocol/openrpc.json").path

    @Test func theCommittedDocumentIsWhatTheCodePrints() throws {
        let committed = try String(contentsOfFile: Self.committedPath, encoding: .utf8)
        let printed = OpenRPCDocument.text
        guard committed != printed else { return }
        let committedLines = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let printedLines = printed.split(separator: "\n", omittingEmptySubsequences: false)
        let first =
            zip(committedLines, printedLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(committedLines.count, printedLines.count)
        Issue.record(
            """
            Protocol/openrpc.json differs from `datasourced schema` from line \(first + 1): \
            committed \(committedLines.count > first ? String(committedLines[first]) : "(end)") | \
            printed \(printedLines.count > first ? String(printedLines[first]) : "(end)"). \
            Run `swift run datasourced schema > Protocol/openrpc.json` and review the diff.
            """)
    }

    @Test func eachMethodsFragmentNamesItsMethodOnce() throws {
        let methods = try #require(OpenRPCDocument.json["methods"]?.arrayValue)
        let names = methods.compactMap { $0["name"]?.stringValue }
        #expect(names == ProtocolMethods.all.map { $0.name })
        #expect(Set(names).count == names.count, "a method listed twice: \(names)")
        #expect(Daemon.methodTable().names == names.sorted())
        for method in methods {
            #expect(method["params"]?.arrayValue != nil, "\(method["name"] ?? .null) has no params list")
            #expect(method["result"]?["schema"] != nil, "\(method["name"] ?? .null) has no result schema")
        }
    }

    @Test func eachNotificationsFragmentNamesItsNotification() throws {
        let notifications = try #require(OpenRPCDocument.json["x-notifications"]?.arrayValue)
        #expect(notifications.compactMap { $0["name"]?.stringValue } == NotificationName.allCases.map(\.rawValue))
    }

    @Test func everyReferenceResolvesToAComponent() throws {
        let document = OpenRPCDocument.json
        var references: Set<String> = []
        func collect(_ value: JSON) {
            if let members = value.objectMembers {
                for (key, member) in members {
                    if key == "$ref", let target = member.stringValue { references.insert(target) } else { collect(member) }
                }
            } else if let elements = value.arrayValue {
                elements.forEach(collect)
            }
        }
        collect(document)
        let schemas = Set(SchemaComponents.schemas.map { "#/components/schemas/\($0.name)" })
        let errors = Set(ErrorComponent.allCases.map { "#/components/errors/\($0.name)" })
        #expect(references.subtracting(schemas).subtracting(errors).isEmpty, "\(references.subtracting(schemas).subtracting(errors))")
        #expect(schemas.subtracting(references).isEmpty, "components nothing refers to: \(schemas.subtracting(references))")
    }
}
