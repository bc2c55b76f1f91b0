@testable import Daemon
import DataSources
import JSONKit
import JSONRPC
import Testing

/// Issue 12: no number a client can send breaks the daemon, and issue 11: every refused
/// member is named. The methods come from the daemon's own `initialize` answer, so a new
/// method fails these tests until it is described in `WireShapes`.
@Suite struct WireBoundaryTests {
    /// Numbers sent to every numeric member as JSON values...
    static let boundaryValues: [JSON] = [0, -1, JSON(1 << 31), JSON(Int.max), 1e308, -0.0, 1.5]
    /// ...and as text jansson cannot hold (a raw frame).
    static let oversizedTexts = ["18446744073709551616", "1e400"]

    @Test func everyNumericMemberOfEveryMethodTakesBoundaryValues() throws {
        let session = try KeptSession()
        var cases = 0
        for shape in try session.shapesOfEveryMethod() {
            for member in shape.numbers {
                for value in Self.boundaryValues {
                    cases += 1
                    session.prepare(shape)
                    let response = session.client.request(shape.method, shape.params.replacing(member.path, with: value))
                    check(response, for: value, at: member, of: shape)
                    session.expectIntact(after: "\(shape.name) \(member.path) = \(value)")
                }
                for text in Self.oversizedTexts {
                    cases += 1
                    session.prepare(shape)
                    let response = session.client.raw(frameBody(shape, member.path, text))
                    checkOversized(response, text, at: member, of: shape)
                    session.expectIntact(after: "\(shape.name) \(member.path) = \(text)")
                }
            }
        }
        #expect(cases > 200)
    }

    @Test func everyMethodNamesItsMissingMistypedAndUnknownMembers() throws {
        let session = try KeptSession()
        for shape in try session.shapesOfEveryMethod() {
            for member in shape.required {
                let response = session.client.request(shape.method, shape.params.replacing(member, with: nil))
                let data = try refusal(response, shape, "without \(member)")
                #expect(data["field"] == JSON(member), "\(shape.name) without \(member): \(response)")
                #expect(data["got"] == "nothing", "\(shape.name) without \(member): \(response)")
            }
            if let (member, wrong) = shape.mistyped {
                let response = session.client.request(shape.method, shape.params.replacing(member, with: wrong))
                let data = try refusal(response, shape, "with \(member) = \(wrong)")
                #expect(data["field"] == JSON(member), "\(shape.name) with \(member) = \(wrong): \(response)")
                #expect(data["got"] == JSON(wrong.kind.rawValue), "\(shape.name) with \(member) = \(wrong): \(response)")
            }
            let (typo, meant) = shape.nearMiss
            let response = session.client.request(shape.method, shape.params.setting(typo, to: 1))
            let data = try refusal(response, shape, "with the unknown member \(typo)")
            #expect(data["field"] == JSON(typo), "\(shape.name) with \(typo): \(response)")
            #expect(data["got"] == JSON(typo), "\(shape.name) with \(typo): \(response)")
            #expect(data["didYouMean"] == meant.map { JSON($0) }, "\(shape.name) with \(typo): \(response)")
            session.expectIntact(after: "\(shape.name) refusals")
        }
    }

    /// Messages of up to 64 KB reach the methods packed, larger ones as jansson's tree
    /// (`Payload.largestPackedMessage`): every method, with every value and refusal above,
    /// answers the same bytes either way. A message is made larger with spaces after it.
    @Test func packedAndTreeParamsAnswerAlike() throws {
        let packed = try KeptSession(), tree = try KeptSession()
        let spaces = [UInt8](repeating: 32, count: Payload.largestPackedMessage)
        func body(_ shape: WireShape, _ params: JSON) -> [UInt8] {
            JSON.object([("jsonrpc", "2.0"), ("id", 424242), ("method", JSON(shape.method)), ("params", params)]).encoded()
        }
        var cases = 0
        for shape in try packed.shapesOfEveryMethod() {
            var bodies = [body(shape, shape.params), body(shape, shape.params.setting(shape.nearMiss.typo, to: 1))]
            bodies += shape.required.map { body(shape, shape.params.replacing($0, with: nil)) }
            if let (member, wrong) = shape.mistyped { bodies.append(body(shape, shape.params.replacing(member, with: wrong))) }
            for member in shape.numbers {
                bodies += Self.boundaryValues.map { body(shape, shape.params.replacing(member.path, with: $0)) }
                bodies += Self.oversizedTexts.map { frameBody(shape, member.path, $0) }
            }
            for text in bodies {
                cases += 1
                packed.prepare(shape)
                tree.prepare(shape)
                let answer = packed.client.raw(text), sameAsTree = tree.client.raw(text + spaces)
                #expect(
                    Self.withoutClockTimes(answer) == Self.withoutClockTimes(sameAsTree),
                    "\(shape.name): \(String(decoding: text, as: UTF8.self))")
            }
        }
        #expect(cases > 300)
    }

    /// The answer's text with the times read from the clock (a refresh's `nextRefreshAt`,
    /// spread by a random jitter) masked.
    private static func withoutClockTimes(_ answer: JSON) -> String {
        answer.text().replacing(/"nextRefreshAt":"[^"]*"/, with: #""nextRefreshAt":"…""#)
    }

    // MARK: Checks

    /// A value the wire layer refuses is named with what was expected and what came; a
    /// value it takes gives a result, or a refusal by the model that names the same member
    /// (an index beyond the rows that exist).
    private func check(_ response: JSON, for value: JSON, at member: NumericMember, of shape: WireShape) {
        let context = "\(shape.name) with \(member.path) = \(value): \(response)"
        let error = response["error"]
        #expect(error?["code"] != JSON(ErrorCode.internalError), "\(context)")
        switch member.verdict(value) {
        case .refused(let got):
            #expect(error?["code"] == JSON(ErrorCode.invalidParams), "\(context)")
            #expect(error?["data"]?["field"] == JSON(member.path), "\(context)")
            #expect(error?["data"]?["expected"]?.kind == .string, "\(context)")
            #expect(error?["data"]?["got"] == got, "\(context)")
        case .accepted:
            if let error {
                // The model checks an index path as a whole: `indexPath` for `indexPath[1]`.
                let field = error["data"]?["field"]?.stringValue ?? ""
                let namesMember = field == member.path || member.path.hasPrefix(field + "[")
                let refusedByModel = error["code"] == JSON(ErrorCode.invalidParams) && namesMember && error["data"]?["got"] != nil
                let expectedRefusal = shape.validCallRefusal.map { error["code"] == JSON($0) } ?? false
                #expect(refusedByModel || expectedRefusal, "\(context)")
            } else {
                #expect(response["result"] != nil, "\(context)")
                shape.checkResult?(response["result"]!, context)
            }
        }
    }

    /// An integer beyond 64 bits, or a real beyond a double, is refused under the request's
    /// id. jansson refuses the whole text, so the member cannot be named: `params` is.
    private func checkOversized(_ response: JSON, _ text: String, at member: NumericMember, of shape: WireShape) {
        let context = "\(shape.name) with \(member.path) = \(text): \(response)"
        #expect(response["id"] == 424242, "\(context)")
        #expect(response["error"]?["code"] == JSON(ErrorCode.invalidParams), "\(context)")
        let data = response["error"]?["data"]
        #expect(data?["field"] == "params" || data?["field"] == JSON(member.path), "\(context)")
        #expect(data?["expected"]?.kind == .string && data?["got"] != nil, "\(context)")
    }

    private func refusal(_ response: JSON, _ shape: WireShape, _ what: String) throws -> JSON {
        let error = try #require(response["error"], "\(shape.name) \(what) was accepted: \(response)")
        #expect(error["code"] == JSON(ErrorCode.invalidParams), "\(shape.name) \(what): \(response)")
        let data = try #require(error["data"], "\(shape.name) \(what): no data: \(response)")
        #expect(data["expected"]?.kind == .string, "\(shape.name) \(what): \(response)")
        return data
    }

    private func frameBody(_ shape: WireShape, _ path: String, _ text: String) -> [UInt8] {
        let marker = "numeric-marker-9f3c"
        let request: JSON = [
            "jsonrpc": "2.0", "id": 424242, "method": JSON(shape.method), "params": shape.params.replacing(path, with: JSON(marker)),
        ]
        let encoded = String(decoding: request.encoded(), as: UTF8.self)
        let parts = encoded.split(separator: "\"\(marker)\"", omittingEmptySubsequences: false)
        return Array(parts.joined(separator: text).utf8)
    }
}

/// A daemon holding two sources that every case must leave as they were: a simple one,
/// and a remote one loaded through the scripted fetcher.
private final class KeptSession {
    static let keptRows: JSON = [["id": 1, "group": "x"], ["id": 2, "group": "y"], ["id": 3, "group": "x"]]
    static let remoteURL = "http://fixture.invalid/items"
    static let remoteBody = #"[{"id":10,"name":"a"},{"id":11,"name":"b"}]"#

    let client: WireClient
    private(set) var methods: [String] = []

    init() throws {
        client = WireClient(
            fetcher: ScriptedFetcher([
                Self.remoteURL: .success(
                    RemoteResponse(url: Self.remoteURL, status: 200, contentType: "application/json", body: Array(Self.remoteBody.utf8)))
            ]))
        let initialized = client.request("initialize")
        let listed = initialized["result"]?["capabilities"]?["methods"]?.arrayValue?.compactMap { $0.stringValue }
        methods = try #require(listed, "initialize lists no methods: \(initialized)")
        #expect(client.request("createSource", ["name": "keep", "kind": "simple", "objects": Self.keptRows])["result"] != nil)
        #expect(
            client.request(
                "createSource",
                [
                    "name": "remote", "kind": "remote", "remoteConfiguration": ["baseURL": "http://fixture.invalid"],
                    "apiPath": "items",
                ])["result"] != nil)
        let loaded = client.request("fetchData", ["source": "remote", "wait": true])
        #expect(loaded["result"] != nil, "\(loaded)")
        #expect(client.request("allObjects", ["source": "remote"])["result"] == (try? JSON.parse(Self.remoteBody)))
    }

    func shapesOfEveryMethod() throws -> [WireShape] {
        var shapes: [WireShape] = []
        for method in methods {
            let described = WireShapes.all.filter { $0.method == method }
            if described.isEmpty { Issue.record("\(method) has no description in WireShapes: add its params there") }
            shapes += described
        }
        #expect(shapes.count >= methods.count)
        return shapes
    }

    /// Editing methods work on a scratch source, made afresh; created sources are removed.
    func prepare(_ shape: WireShape) {
        _ = client.request("destroySource", ["name": "probe", "cascade": true])
        _ = client.request("destroySource", ["name": "scratch", "cascade": true])
        _ = client.request("createSource", ["name": "scratch", "kind": "simple", "objects": Self.keptRows])
        _ = client.request("createSource", ["name": "scratchFiltered", "kind": "filtered", "source": "scratch"])
    }

    func expectIntact(after what: String) {
        #expect(client.request("ping")["result"] == ["delayMilliseconds": 0], "no ping answer after \(what)")
        #expect(client.request("allObjects", ["source": "keep"])["result"] == Self.keptRows, "keep changed after \(what)")
        #expect(
            client.request("allObjects", ["source": "remote"])["result"] == (try? JSON.parse(Self.remoteBody)),
            "remote changed after \(what)")
    }
}
