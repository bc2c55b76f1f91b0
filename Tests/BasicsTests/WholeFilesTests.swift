import Basics
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Testing

@Suite struct WholeFilesTests {
    /// A pipe with `bytes` written and its write end closed, read by `body`.
    private func withPipe<Result>(holding bytes: [UInt8], _ body: (FileDescriptor) throws -> Result) throws -> Result {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = FileDescriptor(rawValue: ends[0]), writer = FileDescriptor(rawValue: ends[1])
        defer { try? reader.close() }
        // Written from another thread: more than a pipe's buffer would block this one.
        DispatchQueue.global().async {
            _ = try? writer.writeAll(bytes)
            try? writer.close()
        }
        return try body(reader)
    }

    @Test func readsAPipeToItsEndAcrossManyReads() throws {
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        #expect(try withPipe(holding: bytes) { try $0.readToEnd() } == bytes)
    }

    @Test func anEmptyPipeReadsAsNoBytes() throws {
        #expect(try withPipe(holding: []) { try $0.readToEnd() } == [])
    }

    @Test func moreThanTheLimitIsNilAndExactlyTheLimitIsRead() throws {
        let bytes = [UInt8](repeating: 7, count: 100_000)
        #expect(try withPipe(holding: bytes) { try $0.readToEnd(atMost: 99_999) } == nil)
        #expect(try withPipe(holding: bytes) { try $0.readToEnd(atMost: 100_000) } == bytes)
    }

    @Test func aClosedDescriptorThrowsItsErrno() {
        #expect(throws: Errno.badFileDescriptor) { try FileDescriptor(rawValue: -1).readToEnd() }
    }
}
