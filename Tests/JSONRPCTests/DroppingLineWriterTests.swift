#if canImport(Glibc)
import Glibc
#endif
import Basics
import JSONRPC
import Testing

@Suite struct DroppingLineWriterTests {
    /// Reads from a non-blocking descriptor until `done` says so, or `milliseconds` pass.
    private func readUntil(_ descriptor: Int32, milliseconds: Int, done: ([UInt8]) -> Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = MonotonicClock.milliseconds() + milliseconds
        while !done(bytes) {
            let remaining = deadline - MonotonicClock.milliseconds()
            if remaining <= 0 { break }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining)) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { bytes.append(contentsOf: chunk[..<count]) } else if count == 0 { break }
        }
        return bytes
    }

    @Test func neverBlocksOnAPipeNobodyReadsAndCountsWhatItDrops() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let writer = DroppingLineWriter(descriptor: ends[1], capacity: 64 << 10)
        let line = Array(String(repeating: "x", count: 99).utf8) + [10]
        let total = 100_000
        // 10 MB into a 64 KB pipe and a 64 KB queue, from a thread of its own, so a writer
        // that blocks shows up as a timeout here rather than a hung test run.
        let finished = Mailbox<Bool>()
        startThread {
            for _ in 0..<total { writer.write(line) }
            finished.post(true)
        }
        #expect(finished.takeAll(waitingAtMost: 20_000) == [true], "write blocked on a full pipe")
        let dropped = writer.droppedLines
        #expect(dropped > 0)
        // At least a full queue is kept (more when the writer thread drained some into the
        // pipe meanwhile, which depends on scheduling).
        #expect(total - dropped >= (64 << 10) / line.count - 1, "only \(total - dropped) lines kept: less than the queue holds")

        // Now the reader catches up: every line not dropped arrives whole, and notes in the
        // gaps account for every line dropped, the last gap included.
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        func notedDrops(_ lines: [ArraySlice<UInt8>]) -> [Int] {
            lines.compactMap { line -> Int? in
                let text = String(decoding: line, as: UTF8.self)
                guard text.hasPrefix("["),
                    text.hasSuffix(" log lines dropped: stderr was not being read]")
                        || text.hasSuffix(" log line dropped: stderr was not being read]")
                else { return nil }
                return Int(text.dropFirst().prefix { $0.isNumber })
            }
        }
        let output = readUntil(ends[0], milliseconds: 20_000) { bytes in
            notedDrops(bytes.split(separator: 10)).reduce(0, +) >= dropped
        }
        let lines = output.split(separator: 10)
        #expect(lines.filter { $0.elementsEqual(line.dropLast()) }.count == total - dropped)
        #expect(notedDrops(lines).reduce(0, +) == dropped)
        #expect(notedDrops([lines.last ?? []]).count == 1, "the output must end with a note for the last lines dropped")
        #expect(lines.count == total - dropped + notedDrops(lines).count, "nothing but lines and notes")
    }

    @Test func writesEveryLineInOrderWhenRead() {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        let writer = DroppingLineWriter(descriptor: ends[1])
        var stream = DroppingLineStream(writer: writer)
        for index in 0..<1000 { stream.write("line \(index)\n") }
        let expected = (0..<1000).map { "line \($0)\n" }.joined()
        let output = readUntil(ends[0], milliseconds: 20_000) { $0.count >= expected.utf8.count }
        #expect(String(decoding: output, as: UTF8.self) == expected)
        #expect(writer.droppedLines == 0)
    }
}
