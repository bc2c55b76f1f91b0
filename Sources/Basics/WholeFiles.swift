import SystemPackage
// What the package's targets use of swift-system, through Basics alone.
@_exported import struct SystemPackage.FileDescriptor
@_exported import struct SystemPackage.Errno

// Whole files and pipes go through swift-system's FileDescriptor: `writeAll` (swift-system's
// own, retrying interrupted and partial writes) for writes, `readToEnd` (below) for reads.

extension FileDescriptor {
    /// Every byte to the end of the file (a pipe's: once every writer has closed it), reads
    /// interrupted by a signal retried; nil once there are more than `limit`, read no further.
    package func readToEnd(atMost limit: Int = .max) throws(Errno) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try read(into: $0) }
            } catch let error as Errno {
                throw error
            } catch {
                preconditionFailure("FileDescriptor.read threw \(error), not an Errno")
            }
            if count == 0 { return bytes }
            guard count <= limit - bytes.count else { return nil }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
