import Basics
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Object keys shared by every packed value in the process. The rows of a list repeat the
// same few keys; a packed object names a shared key by a small number (one byte for the
// first 64 keys) instead of carrying its bytes. For `{"id":…,"title":…,"group":…,"score":…}`
// that is 17 of the row's 55 bytes, a malloc size class lower per row.
//
// A member's key is written as one varint, its "key reference":
//   even: (id << 1), a key of this table
//   odd:  (length << 1) | 1, followed by the key's bytes (a key the table does not hold)
//
// The table only grows, and is bounded: at most `capacity` keys of at most `longestKey`
// bytes. A server sending endless new keys fills it once and its later keys stay inline,
// so memory stays fixed and nothing is ever freed that a packed value could still name:
// an id names the same bytes for the life of the process.
//
// Lookups take no lock. A key's bytes are written before its id is published into the
// lookup slots (a releasing store) and read after the id is loaded (an acquiring load); a
// reader that finds an id inside a packed value got that value from the thread that
// wrote it, through whatever handed the value over, so it sees the bytes too.
enum PackedKeys {
    static let capacity = 1 << 14
    static let longestKey = 64
    /// Twice the capacity: probe sequences stay short.
    private static let slotCount = 1 << 15
    /// A probe gives up after this many slots (the key stays inline): a lookup's cost is
    /// bounded whatever keys came before it.
    private static let longestProbe = 32

    /// Keys by id, and the lookup slots.
    private static let table = Table()
    /// The number of keys, changed under its lock, which adding a key holds.
    private static let count = LockedValue(0)

    /// The table's memory, allocated once and never freed.
    ///
    /// Unchecked, and why that is safe, as the comment at the top says: an entry of `keys`
    /// is written once, under `count`'s lock, before its id is published into `slots` (a
    /// releasing store of an atomic), and read only after that id is loaded (an acquiring
    /// load) or handed over inside a packed value; entries below the count never change.
    private struct Table: @unchecked Sendable {
        let keys: UnsafeMutablePointer<UnsafeBufferPointer<UInt8>> = .allocate(capacity: PackedKeys.capacity)
        /// id + 1 of the key hashed to each slot, 0 for none.
        let slots: UnsafeMutablePointer<Atomic<Int32>> = {
            let slots = UnsafeMutablePointer<Atomic<Int32>>.allocate(capacity: PackedKeys.slotCount)
            for index in 0..<PackedKeys.slotCount { (slots + index).initialize(to: Atomic(0)) }
            return slots
        }()
    }

    @inline(__always) private static var keys: UnsafeMutablePointer<UnsafeBufferPointer<UInt8>> { table.keys }
    @inline(__always) private static var slots: UnsafeMutablePointer<Atomic<Int32>> { table.slots }

    /// The bytes of key `id`; stable for the life of the process.
    @inline(__always) static func bytes(ofID id: Int) -> UnsafeBufferPointer<UInt8> { keys[id] }

    /// The id of `key`, added to the table if there is room; nil for a key kept inline.
    static func id(of key: UnsafeBufferPointer<UInt8>) -> Int? {
        guard key.count <= longestKey else { return nil }
        var hasher = FoldHasher()
        hasher.combine(UInt64(key.count))
        hasher.combine(bytes: UnsafeRawBufferPointer(key))
        let home = hasher.finish()
        if case .found(let id) = probe(key, from: home) { return id }
        return count.withLock { count in
            // Probed again under the lock: another thread may have added it meanwhile.
            switch probe(key, from: home) {
            case .found(let id): return id
            case .full: return nil
            case .empty(let slot):
                guard count < capacity else { return nil }
                let stored = UnsafeMutablePointer<UInt8>.allocate(capacity: max(key.count, 1))
                if let base = key.baseAddress { stored.initialize(from: base, count: key.count) }
                keys[count] = UnsafeBufferPointer(start: stored, count: key.count)
                slots[slot].store(Int32(count + 1), ordering: .releasing)
                count += 1
                return count - 1
            }
        }
    }

    private enum Probe {
        case found(Int)
        /// Not there; the first free slot on its probe sequence.
        case empty(Int)
        /// Not there, and no free slot within `longestProbe`.
        case full
    }

    private static func probe(_ key: UnsafeBufferPointer<UInt8>, from home: Int) -> Probe {
        var slot = home & (slotCount - 1)
        for _ in 0..<longestProbe {
            let stored = Int(slots[slot].load(ordering: .acquiring))
            if stored == 0 { return .empty(slot) }
            if equal(keys[stored - 1], key) { return .found(stored - 1) }
            slot = (slot + 1) & (slotCount - 1)
        }
        return .full
    }

    @inline(__always) static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        if a.count == 0 || a.baseAddress == b.baseAddress { return true }
        return memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
    }

    /// The key reference of `key` (see the layout above), through `cache` first.
    static func reference(of key: UnsafeBufferPointer<UInt8>, cache: inout KeyCache) -> UInt64 {
        if let id = cache.id(of: key) { return UInt64(id) << 1 }
        guard let id = id(of: key) else { return UInt64(key.count) << 1 | 1 }
        cache.remember(bytes(ofID: id), id: id)
        return UInt64(id) << 1
    }
}

/// The ids of recently written keys, by a cheap hash of their bytes: rows of one list
/// repeat their keys, and a hit costs one comparison of a few bytes, where the shared table
/// hashes the key first. Kept by whoever packs many values (`PackingScratch`).
struct KeyCache {
    private struct Entry {
        var base: UnsafePointer<UInt8>?
        /// -1 for an empty entry: no key has that length.
        var count = -1
        var id = 0
    }

    /// Allocated on the first key remembered: a scratch made for one value costs nothing.
    private var entries: [Entry] = []

    @inline(__always) private func slot(_ key: UnsafeBufferPointer<UInt8>) -> Int {
        guard let first = key.first else { return 0 }
        return (key.count &* 31 &+ Int(first) &* 7 &+ Int(key[key.count - 1])) & 63
    }

    @inline(__always) func id(of key: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !entries.isEmpty else { return nil }
        let entry = entries[slot(key)]
        guard entry.count == key.count else { return nil }
        return PackedKeys.equal(UnsafeBufferPointer(start: entry.base, count: entry.count), key) ? entry.id : nil
    }

    /// Remembers a key of the table (`key`: its bytes there, which never move).
    mutating func remember(_ key: UnsafeBufferPointer<UInt8>, id: Int) {
        if entries.isEmpty { entries = [Entry](repeating: Entry(), count: 64) }
        entries[slot(key)] = Entry(base: key.baseAddress, count: key.count, id: id)
    }
}
