@testable import Daemon
@testable import DataSources
import JSONKit
import Testing

/// Issue 28: a rate-limited response says so (`rateLimited`), and when to retry
/// (`retryAfterSeconds`), from every common form of rate-limit headers; `describeSource`
/// shows the last status seen.
@Suite struct RateLimitTests {
    static let now = 1_800_000_000.0

    static func read(_ headers: [(name: String, value: String)]) -> RateLimitStatus? {
        RateLimitStatus.read(from: headers, now: now)
    }

    @Test func githubsHeadersGiveTheResetAsATime() {
        let status = Self.read([
            ("X-RateLimit-Limit", "60"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1800000120"),
            ("X-RateLimit-Used", "60"), ("X-RateLimit-Resource", "core"),
        ])
        #expect(status == RateLimitStatus(limit: 60, remaining: 0, resetAt: 1_800_000_120))
        #expect(status?.secondsUntilReset(now: Self.now) == 120)
        #expect(status?.secondsUntilReset(now: Self.now + 119.5) == 1, "whole seconds, rounded up")
        #expect(status?.secondsUntilReset(now: Self.now + 500) == 0, "a reset past is no wait")
        // Some APIs send seconds from now under the same name: a time in 2001 would be absurd.
        #expect(Self.read([("x-ratelimit-reset", "60")])?.resetAt == Self.now + 60)
    }

    @Test func theIETFDraftsFormsGiveTheResetInSeconds() {
        #expect(
            Self.read([("RateLimit-Limit", "100"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "30")])
                == RateLimitStatus(limit: 100, remaining: 0, resetAt: Self.now + 30))
        #expect(
            Self.read([("RateLimit-Limit", "100, 100;w=10, 1000;w=3600"), ("RateLimit-Remaining", "0")])
                == RateLimitStatus(limit: 100, remaining: 0), "the first of a list, before its parameters")
        #expect(
            Self.read([("RateLimit", "limit=100, remaining=0, reset=30")])
                == RateLimitStatus(limit: 100, remaining: 0, resetAt: Self.now + 30))
        #expect(Self.read([("RateLimit", #""default";r=0;t=30"#)]) == RateLimitStatus(remaining: 0, resetAt: Self.now + 30))
        #expect(
            Self.read([
                ("RateLimit", #""burst";r=5;t=1, "daily";r=0;t=3600"#), ("RateLimit-Policy", #""burst";q=10;w=1, "daily";q=1000;w=86400"#),
            ])
                == RateLimitStatus(limit: 1000, remaining: 0, resetAt: Self.now + 3600), "the most restrictive policy, with its quota")
    }

    @Test func everyNumberIsRangeChecked() {
        #expect(Self.read([("X-RateLimit-Reset", "1180591620717411303424")]) == nil, "2^70 seconds is ignored, not a trap")
        #expect(Self.read([("X-RateLimit-Remaining", "-1")]) == nil)
        #expect(Self.read([("X-RateLimit-Remaining", "0x10")]) == nil)
        #expect(Self.read([("X-RateLimit-Remaining", "")]) == nil)
        #expect(Self.read([("RateLimit-Reset", "999999999999")]) == nil, "more than ten years from now is garbage")
        #expect(Self.read([("X-RateLimit-Reset", "99999999999")]) == nil, "a time more than ten years ahead too")
        #expect(Self.read([("RateLimit", #""default";r=99999999999999999999;t=1e9"#)]) == nil)
        #expect(Self.read([("RateLimit", "limit=, remaining=x")]) == nil)
        #expect(Self.read([("Content-Type", "application/json")]) == nil)
    }

    static func failure(_ status: Int, _ headers: [(name: String, value: String)]) -> FetchError {
        ResponseDecoding.httpFailure(RemoteResponse(url: "http://api.invalid/x", status: status, headers: headers, body: []), secrets: [])
    }

    @Test func githubsExhausted403IsRateLimitedUntilTheReset() {
        let reset = Int(WallClock.secondsSince1970()) + 120
        let error = Self.failure(403, [("X-RateLimit-Limit", "60"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", String(reset))])
        #expect(error.rateLimited)
        #expect((119...120).contains(error.retryAfterSeconds ?? -1), "\(String(describing: error.retryAfterSeconds))")
        #expect(error.rateLimit == RateLimitStatus(limit: 60, remaining: 0, resetAt: Double(reset)))
        #expect(error.json["rateLimited"] == true && error.json["kind"] == "http" && error.json["status"] == 403)
    }

    @Test func eachFormOfTheHeadersMarksA429() {
        for headers in [
            [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "30")], [("RateLimit", "limit=100, remaining=0, reset=30")],
            [("RateLimit", #""default";r=0;t=30"#)], [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "30")],
        ] {
            let error = Self.failure(429, headers)
            #expect(error.rateLimited && error.retryAfterSeconds == 30, "\(headers)")
        }
        let plain = Self.failure(429, [])
        #expect(plain.rateLimited && plain.retryAfterSeconds == nil, "a 429 is a rate limit even without the headers")
        #expect(
            Self.failure(429, [("Retry-After", "7"), ("RateLimit-Remaining", "0"), ("RateLimit-Reset", "30")]).retryAfterSeconds == 7,
            "Retry-After, when given, says it exactly")
    }

    @Test func a403IsRateLimitedOnlyWhenTheHeadersSaySo() {
        let forbidden = Self.failure(403, [])
        #expect(!forbidden.rateLimited && forbidden.retryAfterSeconds == nil && forbidden.json["rateLimited"] == nil)
        #expect(!Self.failure(403, [("X-RateLimit-Remaining", "12"), ("X-RateLimit-Reset", "30")]).rateLimited)
        let secondary = Self.failure(403, [("Retry-After", "60"), ("X-RateLimit-Remaining", "4000")])
        #expect(secondary.rateLimited && secondary.retryAfterSeconds == 60, "GitHub's secondary limits send Retry-After")
        let huge = Self.failure(403, [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1180591620717411303424")])
        #expect(huge.rateLimited && huge.retryAfterSeconds == nil)
        #expect(!Self.failure(500, [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "30")]).rateLimited)
        #expect(Self.failure(404, [("X-RateLimit-Remaining", "3")]).rateLimit?.remaining == 3, "every response's status is noted")
    }

    /// The `retryAfter` policy retries a rate-limited response as it does a `Retry-After`.
    @Test func theRetryPolicyAppliesToARateLimitedPage() throws {
        let (source, loader, recorder) = try PaginatedStateMachineTests.source(["retryAfter": ["maxRetries": 1, "maxDelaySeconds": 60]])
        source.fetchData()
        loader.respond(
            0, status: 403, json: ["message": "API rate limit exceeded"], headers: [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "5")])
        #expect(loader.pending.count == 2, "retried")
        #expect(loader.pending[1].request.delaySeconds == 5)
        loader.respond(
            1, status: 403, json: ["message": "API rate limit exceeded"], headers: [("RateLimit-Remaining", "0"), ("RateLimit-Reset", "5")])
        #expect(loader.pending.count == 2, "once")
        let error = try #require(recorder.errors.last)
        #expect(
            error["rateLimited"] == true && error["retryAfterSeconds"]?.doubleValue == 5
                && error["serverMessage"] == "API rate limit exceeded")
    }

    @Test func describeSourceShowsTheLastRateLimitSeen() throws {
        let (source, loader, _) = try PaginatedStateMachineTests.source()
        #expect(source.summary["rateLimit"] == nil, "none seen yet")
        source.fetchData()
        loader.respond(
            0, json: PaginatedStateMachineTests.page([1, 2]),
            headers: [("X-RateLimit-Limit", "5000"), ("X-RateLimit-Remaining", "4999"), ("X-RateLimit-Reset", "1800000000")])
        #expect(source.summary["rateLimit"] == ["limit": 5000, "remaining": 4999, "resetAt": "2027-01-15T08:00:00.000Z"])
        try #require(source.fetchNextPage())
        loader.respond(
            1, status: 403, json: [:],
            headers: [("X-RateLimit-Limit", "5000"), ("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "1800000000")])
        #expect(source.summary["rateLimit"] == ["limit": 5000, "remaining": 0, "resetAt": "2027-01-15T08:00:00.000Z"])
        try #require(source.fetchNextPage())
        loader.respond(2, json: PaginatedStateMachineTests.page([3]))
        #expect(source.summary["rateLimit"]?["remaining"] == 0, "a response without the headers keeps the last status")
    }
}
