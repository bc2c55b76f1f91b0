import JSONKit

/// The objects a paging run keeps when the list shifted between two requests and a page
/// repeats an identity already held: the first one only, the later ones counted
/// (`dropLater`), or every one (`keep`).
struct DuplicateFilter {
    let policy: PaginatorConfiguration.DuplicatePolicy
    let identity: Identity
    private var identities: IdentitySet
    /// Objects dropped in this run (`describeSource.duplicatesDropped`).
    private(set) var dropped = 0

    init(policy: PaginatorConfiguration.DuplicatePolicy, identity: Identity) {
        self.policy = policy
        self.identity = identity
        identities = IdentitySet(identity: identity)
    }

    /// A run starts: nothing is held.
    mutating func startRun() {
        identities = IdentitySet(identity: identity)
        dropped = 0
    }

    /// The rows of a page that arrived to keep, with their identity hashes.
    mutating func keep(_ rows: [JSON], hashes: [Int]) -> (rows: [JSON], hashes: [Int]) {
        guard policy == .dropLater else { return (rows, hashes) }
        var keptRows: [JSON] = [], keptHashes: [Int] = []
        for (row, hash) in zip(rows, hashes) where identities.insert(row, hash: hash) {
            keptRows.append(row)
            keptHashes.append(hash)
        }
        dropped = dropped.addingClamped(rows.count - keptRows.count)
        return (keptRows, keptHashes)
    }

    /// A row the list holds that no page brought (an action's): a page that brings its
    /// identity later repeats it.
    mutating func hold(_ row: JSON) {
        guard policy == .dropLater else { return }
        _ = identities.insert(row)
    }

    /// The count to report, as a stored run says (its rows were kept without a drop).
    mutating func reported(_ count: Int) { dropped = max(0, count) }

    /// The same, for rows whose hashes the caller does not have.
    mutating func keep(_ rows: [JSON]) -> [JSON] {
        guard policy == .dropLater else { return rows }
        let kept = rows.filter { identities.insert($0) }
        dropped = dropped.addingClamped(rows.count - kept.count)
        return kept
    }

    /// Rows the window dropped may come back: only `held` are duplicates now.
    mutating func holdOnly(_ held: [JSON]) {
        guard policy == .dropLater else { return }
        var identities = IdentitySet(identity: identity)
        for row in held { _ = identities.insert(row) }
        self.identities = identities
    }

    /// A run taken up whole: each page's rows, later duplicates dropped again. `hashes`: each
    /// page's rows' identity hashes, when the caller has them (the kept rows' are answered
    /// then, else none); `dropped`: the count to report, when known (a cached run's).
    mutating func adopt(
        _ pages: [[JSON]], hashes: [[Int]]? = nil, dropped given: Int? = nil
    ) -> (
        pages: [[JSON]], hashes: [Int]
    ) {
        var identities = IdentitySet(identity: identity), droppedNow = 0
        var keptPages: [[JSON]] = [], keptHashes: [Int] = []
        for (index, var rows) in pages.enumerated() {
            let pageHashes = hashes?[index]
            if policy == .dropLater {
                let kept = rows.indices.filter { identities.insert(rows[$0], hash: pageHashes?[$0] ?? identity.hash(of: rows[$0])) }
                droppedNow += rows.count - kept.count
                if kept.count < rows.count {
                    rows = kept.map { rows[$0] }
                    if let pageHashes { keptHashes += kept.map { pageHashes[$0] } }
                } else if let pageHashes {
                    keptHashes += pageHashes
                }
            } else if let pageHashes {
                keptHashes += pageHashes
            }
            keptPages.append(rows)
        }
        self.identities = identities
        dropped = given ?? droppedNow
        return (keptPages, keptHashes)
    }
}
