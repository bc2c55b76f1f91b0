import JSONKit

/// Makes a recording that was cut short into a transcript again (`datasourced transcript
/// repair`). A recorder killed between two writes leaves a transcript already; one killed in
/// the middle of a write larger than a page can leave its last line of steps torn, or a route
/// line torn (`TranscriptFile` says why only those). The recorder's layout, one member, route
/// or event per line, is what makes the rest readable: each line is read on its own.
package enum TranscriptRepair {
    package struct Repaired {
        /// The transcript, with the members the file had, in its order.
        package let document: JSON
        /// What was dropped, one sentence each (empty: the file was whole).
        package let dropped: [String]
    }

    package struct RepairError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Steps that begin what the recorder writes for one event: cutting before one leaves
    /// whole events (a prefix of the session that replays).
    private static let eventStarts: Set = ["send", "sendBody", "sendRaw", "release", "closeInput", "restart"]

    package static func repair(_ bytes: [UInt8]) throws(RepairError) -> Repaired {
        var dropped: [String] = []
        var document: JSON
        if let whole = try? JSON.parse(bytes), whole.isObject, whole["steps"]?.arrayValue != nil {
            document = whole
        } else {
            document = try salvage(bytes, dropped: &dropped)
        }
        document = cutAtMissingRoutes(document, dropped: &dropped)
        return Repaired(document: document, dropped: dropped)
    }

    /// Reads the file line by line, as the recorder lays it out.
    private static func salvage(_ bytes: [UInt8], dropped: inout [String]) throws(RepairError) -> JSON {
        enum Part { case start, header, fixtures, steps, end }
        var part = Part.start
        var members: [(String, JSON)] = []
        var routes: [JSON] = []
        var steps: [JSON] = []
        var sawFixtures = false, sawSteps = false
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() where part != .end {
            let text = trimmed(line)
            let number = index + 1
            switch part {
            case .start:
                if text.isEmpty { continue }
                guard text.elementsEqual("{".utf8) else { throw notARecording(number, "expected \"{\"") }
                part = .header
            case .header:
                if text.isEmpty { continue }
                if text.elementsEqual(#""fixtures": ["#.utf8) {
                    part = .fixtures
                    sawFixtures = true
                } else if text.elementsEqual(#""steps": ["#.utf8) {
                    part = .steps
                    sawSteps = true
                } else if text.first == UInt8(ascii: "}") {
                    part = .end
                } else {
                    guard let member = try? JSON.parse(Array("{".utf8) + withoutComma(text) + Array("}".utf8)),
                        let (name, value) = member.objectMembers?.first, member.objectMembers?.count == 1
                    else {
                        throw notARecording(number, "expected one member (\"name\": value) on the line")
                    }
                    members.append((name, value))
                }
            case .fixtures:
                if text.elementsEqual(#""steps": ["#.utf8) {
                    // The line closing the fixtures was overwritten by a write cut short.
                    part = .steps
                    sawSteps = true
                    continue
                }
                let (route, closes) = closing(text)
                if !route.isEmpty {
                    if let value = try? JSON.parse(route), value.isObject {
                        routes.append(value)
                    } else {
                        dropped.append("line \(number): a fixture route cut short")
                    }
                }
                if closes { part = .header }
            case .steps:
                if text.elementsEqual("}".utf8) {
                    part = .end
                    continue
                }
                let (event, closes) = closing(text)
                if !event.isEmpty {
                    // A line the file ends in without a newline was being written when the recorder stopped.
                    guard index < lines.count - 1,
                        let value = try? JSON.parse(Array("[".utf8) + event + Array("]".utf8)),
                        let elements = value.arrayValue
                    else {
                        dropped.append("line \(number): the steps of an event cut short, and everything after them")
                        part = .end
                        continue
                    }
                    steps += elements
                }
                if closes { part = .end }
            case .end:
                break
            }
        }
        guard sawSteps else {
            throw RepairError(
                description: "no line opens the \"steps\" array: the file is not a recording, or it lost its end before its steps began")
        }
        if sawFixtures { members.append(("fixtures", .array(routes))) }
        members.append(("steps", .array(steps)))
        return .object(members)
    }

    /// Steps naming a fixture route the file lacks (its line was torn), or releasing a route
    /// that says nothing of its response (the recorder writes a route's response before the
    /// step releasing it; a torn write can leave the route's older, unanswered form), cannot
    /// replay: the transcript ends before the event they belong to.
    private static func cutAtMissingRoutes(_ document: JSON, dropped: inout [String]) -> JSON {
        guard let steps = document["steps"]?.arrayValue else { return document }
        let routes = document["fixtures"]?.arrayValue ?? []
        let holds = Set(routes.compactMap { $0["hold"]?.stringValue })
        let answered = Set(routes.filter { route in responseMembers.contains { route[$0] != nil } }.compactMap { $0["hold"]?.stringValue })
        var problem = ""
        guard
            let missing = steps.firstIndex(where: { step in
                if let name = step["requested"]?.stringValue, !holds.contains(name) {
                    problem = "names the fixture route \"\(name)\", which the file lacks"
                    return true
                }
                if let name = step["release"]?.stringValue, !answered.contains(name) {
                    problem =
                        "releases the fixture route \"\(name)\", "
                        + (holds.contains(name) ? "whose response the file lacks" : "which the file lacks")
                    return true
                }
                return false
            })
        else { return document }
        var end = missing
        while end > 0, !(steps[end].objectKeys.first.map(eventStarts.contains) ?? false) { end -= 1 }
        // The bytes an event ends the input with come just before its closeInput.
        if end > 0, steps[end]["closeInput"] != nil, steps[end - 1]["sendRaw"] != nil { end -= 1 }
        dropped.append("steps \(end)-\(steps.count - 1): step \(missing) \(problem)")
        return document.setting("steps", to: .array(steps[..<end]))
    }

    /// What a route the recorder released says of its response (Protocol.md, "Fixtures").
    private static let responseMembers = ["status", "body", "bodyText", "reset", "padToBytes", "redirectTo"]

    private static func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var text = line
        while let first = text.first, first == 32 || first == 9 || first == 13 { text.removeFirst() }
        while let last = text.last, last == 32 || last == 9 || last == 13 { text.removeLast() }
        return text
    }

    /// A line of routes or steps, and whether it closes their array: a route or a step ends in
    /// `}`, so a `]` at the end is the array's, on this line when a write cut short took the
    /// line break before it.
    private static func closing(_ text: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, closes: Bool) {
        var content = withoutComma(text)
        guard content.last == UInt8(ascii: "]") else { return (content, false) }
        content = withoutComma(trimmed(content.dropLast()))
        return (content, true)
    }

    private static func withoutComma(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        text.last == UInt8(ascii: ",") ? text.dropLast() : text
    }

    private static func notARecording(_ line: Int, _ problem: String) -> RepairError {
        RepairError(
            description:
                "line \(line): \(problem); only a file laid out as --record writes it (one member, route or event per line) can be repaired"
        )
    }
}
