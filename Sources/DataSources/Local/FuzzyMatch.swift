import JSONKit

/// A fuzzy query, scored as fzf's "v2" algorithm scores (junegunn/fzf, src/algo/algo.go;
/// Telescope's fzf sorter is the same): the query's characters must appear in the text in
/// order; each scores 16, a gap before it costs 3 and 1 a further character, and a character
/// at a word start scores more (after a space 10, after `/,:;|` 9, after other
/// punctuation 8, a camelCase hump or the first digit of a number 7), the first character
/// twice its bonus, and a run of consecutive characters keeps its first character's bonus
/// (at least 4). Of all the ways the query fits in the text, the best scoring one (a
/// Smith-Waterman alignment) gives the score and the positions; when that alignment would
/// take more than `FuzzyMatcher.defaultCellLimit` cells (query × text characters), the first
/// way it fits, shortened from its end, as fzf's "v1" algorithm does past its slab.
///
/// Smart case, as fzf: a query with no uppercase letter matches either case; one with an
/// uppercase letter matches case exactly. The query is one pattern: a space in it is a
/// character to find, like any other.
package struct FuzzyPattern: Sendable {
    package let query: String
    let characters: [UInt32]
    let caseSensitive: Bool

    package init(_ query: String) {
        self.query = query
        let caseSensitive = query.unicodeScalars.contains { $0.properties.isUppercase }
        self.caseSensitive = caseSensitive
        characters = query.unicodeScalars.map { caseSensitive ? $0.value : FuzzyPattern.folded($0.value) }
    }

    /// A character in lower case (one scalar to one scalar; others as they are).
    static func folded(_ value: UInt32) -> UInt32 {
        if value < 0x80 { return value >= 0x41 && value <= 0x5A ? value | 0x20 : value }
        guard let scalar = Unicode.Scalar(value), scalar.properties.isUppercase else { return value }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first!.value : value
    }

    /// Whether `longer` finds only texts this pattern finds: it extends this query (each
    /// text holding the longer query in order holds this one), so that a query growing as
    /// it is typed searches the previous matches only. Case never breaks this: a longer
    /// query that is case-sensitive finds the exact characters, which fold to this one's.
    package func isNarrowed(by longer: FuzzyPattern) -> Bool {
        longer.query.unicodeScalars.starts(with: query.unicodeScalars)
    }
}

/// Where a pattern matched and how well.
package struct FuzzyMatch: Sendable, Equatable {
    package let score: Int
    /// The matched characters, as indexes of Unicode scalars (code points) in the text, ascending.
    package let positions: [Int]
}

/// Scores texts against patterns, keeping its working storage from one text to the next
/// (one a thread: each row is scored with no allocation once the storage has grown).
struct FuzzyMatcher {
    static let scoreMatch: Int32 = 16
    static let scoreGapStart: Int32 = -3
    static let scoreGapExtension: Int32 = -1
    static let bonusBoundary: Int32 = scoreMatch / 2
    static let bonusNonWord: Int32 = scoreMatch / 2
    static let bonusCamel123: Int32 = bonusBoundary + scoreGapExtension
    static let bonusConsecutive: Int32 = -(scoreGapStart + scoreGapExtension)
    static let bonusFirstCharMultiplier: Int32 = 2
    static let bonusBoundaryWhite: Int32 = bonusBoundary + 2
    static let bonusBoundaryDelimiter: Int32 = bonusBoundary + 1

    /// fzf's character classes, in its order: a class above `nonWord` is a word character.
    enum CharacterClass: UInt8 { case white, nonWord, delimiter, lower, upper, letter, number }

    private var original: [UInt32] = []
    private var text: [UInt32] = []
    private var bonus: [Int32] = []
    private var scores: [Int32] = []
    private var runs: [Int32] = []
    private var firsts: [Int] = []

    /// The most cells an alignment may have (query characters × text characters from the
    /// first place the query's first character fits to the last place its last one does):
    /// fzf's slab, 100 × 1024. Past it the text is scored greedily (fzf's v1), as fzf does.
    static let defaultCellLimit = 100 * 1024
    let cellLimit: Int

    init(cellLimit: Int = FuzzyMatcher.defaultCellLimit) { self.cellLimit = cellLimit }

    /// What the decoded text holds, in bytes: 4 a character as given and 4 as matched,
    /// reserved for the text's UTF-8 bytes (O(text), bounded by the body a row came in).
    var textBytes: Int { (original.capacity + text.capacity) * MemoryLayout<UInt32>.stride }

    /// What the alignment holds, in bytes: at most `cellLimit` cells of scores and of runs,
    /// a bonus a column (at most `cellLimit` columns) and a place a query character.
    var alignmentBytes: Int {
        (scores.capacity + runs.capacity + bonus.capacity) * MemoryLayout<Int32>.stride + firsts.capacity * MemoryLayout<Int>.stride
    }

    /// The best score of `pattern` in `bytes` (UTF-8), with positions if asked; nil when
    /// the pattern's characters are not all in the text in order. An empty pattern matches
    /// every text with score 0.
    ///
    /// The alignment (fzf's v2) has a cell a query character and a text character between
    /// the first place the query's first character fits and the last place its last one
    /// does; past `cellLimit` cells, the text is scored as fzf's v1 scores it (`greedyMatch`).
    /// Memory: O(text + min(query × text, cellLimit)): the decoded text, 8 bytes a character
    /// (bounded by the size of the body the row came in), and at most 12 × `cellLimit` bytes
    /// of alignment (scores and runs, 8 bytes a cell; a bonus a column). Time:
    /// O(text + min(query × text, cellLimit)), never more than O(query × text).
    mutating func match(_ pattern: FuzzyPattern, in bytes: UnsafeBufferPointer<UInt8>, positions wantsPositions: Bool) -> FuzzyMatch? {
        let query = pattern.characters, length = query.count
        guard length > 0 else { return FuzzyMatch(score: 0, positions: []) }
        guard Self.mayMatch(query, in: bytes, folding: !pattern.caseSensitive) else { return nil }
        decode(bytes, folding: !pattern.caseSensitive)
        let count = text.count

        // Where each query character first fits in order (or no match), and the last place
        // the last one fits: the alignment lies between.
        firsts.removeAll(keepingCapacity: true)
        var index = 0
        for character in query {
            while index < count, text[index] != character { index += 1 }
            guard index < count else { return nil }
            firsts.append(index)
            index += 1
        }
        var last = count - 1
        while text[last] != query[length - 1] { last -= 1 }
        let start = firsts[0], width = last - start + 1
        guard length <= cellLimit / width else { return greedyMatch(query, end: firsts[length - 1], positions: wantsPositions) }

        bonus.removeAll(keepingCapacity: true)
        var previous = start > 0 ? Self.characterClass(original[start - 1]) : .white
        for column in start...last {
            let current = Self.characterClass(original[column])
            bonus.append(Self.bonus(previous, current))
            previous = current
        }

        scores.removeAll(keepingCapacity: true)
        runs.removeAll(keepingCapacity: true)
        scores.append(contentsOf: repeatElement(0, count: length * width))
        runs.append(contentsOf: repeatElement(0, count: length * width))
        var best: Int32 = 0, bestColumn = 0

        // The first query character: a match scores its bonus twice.
        var inGap = false, previousScore: Int32 = 0
        for column in 0..<width {
            if text[start + column] == query[0] {
                let score = Self.scoreMatch + bonus[column] * Self.bonusFirstCharMultiplier
                scores[column] = score
                runs[column] = 1
                if length == 1, score > best { (best, bestColumn) = (score, column) }
                inGap = false
            } else {
                scores[column] = max(previousScore + (inGap ? Self.scoreGapExtension : Self.scoreGapStart), 0)
                inGap = true
            }
            previousScore = scores[column]
        }

        for row in 1..<max(length, 1) {
            let character = query[row], rowStart = row * width, above = rowStart - width
            let first = firsts[row] - start
            inGap = false
            for column in first..<width {
                let left: Int32 = column == first ? 0 : scores[rowStart + column - 1]
                let gap = left + (inGap ? Self.scoreGapExtension : Self.scoreGapStart)
                var diagonal: Int32 = 0, run: Int32 = 0
                if text[start + column] == character {
                    diagonal = scores[above + column - 1] + Self.scoreMatch
                    var characterBonus = bonus[column]
                    run = runs[above + column - 1] + 1
                    if run > 1 {
                        let runBonus = bonus[column - Int(run) + 1]
                        if characterBonus >= Self.bonusBoundary && characterBonus > runBonus {
                            run = 1  // a word start breaks the run
                        } else {
                            characterBonus = max(characterBonus, max(Self.bonusConsecutive, runBonus))
                        }
                    }
                    if diagonal + characterBonus < gap {
                        diagonal += bonus[column]
                        run = 0
                    } else {
                        diagonal += characterBonus
                    }
                }
                runs[rowStart + column] = run
                inGap = diagonal < gap
                let score = max(diagonal, gap, 0)
                if row == length - 1, score > best { (best, bestColumn) = (score, column) }
                scores[rowStart + column] = score
            }
        }
        guard wantsPositions else { return FuzzyMatch(score: Int(best), positions: []) }

        // Back from the best cell, preferring matches as fzf does.
        var found: [Int] = []
        var row = length - 1, column = bestColumn, preferMatch = true
        while column >= 0 {
            let rowStart = row * width, first = firsts[row] - start
            let score = scores[rowStart + column]
            let diagonal: Int32 = row > 0 && column >= first && column > 0 ? scores[rowStart - width + column - 1] : 0
            let left: Int32 = column > first ? scores[rowStart + column - 1] : 0
            let here = rowStart
            if score > diagonal && (score > left || score == left && preferMatch) {
                found.append(start + column)
                if row == 0 { break }
                row -= 1
            }
            preferMatch = runs[here + column] > 1 || (here + width + column + 1 < runs.count && runs[here + width + column + 1] > 0)
            column -= 1
        }
        return FuzzyMatch(score: Int(best), positions: found.reversed())
    }

    /// fzf's `FuzzyMatchV1`, for a text too long to align: the first place the query fits
    /// (forward, the query's last character at `end`), shortened from there (back from `end`,
    /// the last place each character fits), scored with the alignment's rules over that
    /// window (fzf's `calculateScore`): gaps inside it cost, word starts and runs earn. The
    /// first fit, not the best one: `foobar fb` scores `fb` at `f`...`b`, not at its end.
    /// The score is at least 0, as fzf ranks it. O(text) time, no storage but the positions.
    private func greedyMatch(_ query: [UInt32], end: Int, positions wantsPositions: Bool) -> FuzzyMatch {
        var start = end, row = query.count - 1
        while true {
            if text[start] == query[row] {
                if row == 0 { break }
                row -= 1
            }
            start -= 1
        }
        var score = 0, inGap = false, consecutive = 0, firstBonus: Int32 = 0, found: [Int] = []
        if wantsPositions { found.reserveCapacity(query.count) }
        var previous = start > 0 ? Self.characterClass(original[start - 1]) : .white
        row = 0
        for index in start...end {
            let current = Self.characterClass(original[index])
            if row < query.count, text[index] == query[row] {
                if wantsPositions { found.append(index) }
                var bonus = Self.bonus(previous, current)
                if consecutive == 0 {
                    firstBonus = bonus
                } else {
                    // A word start inside a run raises the run's bonus from there.
                    if bonus >= Self.bonusBoundary && bonus > firstBonus { firstBonus = bonus }
                    bonus = max(bonus, firstBonus, Self.bonusConsecutive)
                }
                score += Int(Self.scoreMatch + (row == 0 ? bonus * Self.bonusFirstCharMultiplier : bonus))
                inGap = false
                consecutive += 1
                row += 1
            } else {
                score += Int(inGap ? Self.scoreGapExtension : Self.scoreGapStart)
                inGap = true
                consecutive = 0
                firstBonus = 0
            }
            previous = current
        }
        // fzf ranks by the score clamped to 0 (result.go, `util.AsUint16`): a long window's gaps
        // can cost more than its characters earn, and it still matches (an alignment's cells
        // never go below 0 either).
        return FuzzyMatch(score: max(score, 0), positions: found)
    }

    /// False when the query's characters are certainly not all in the text in order: most
    /// texts lack one, and an ASCII text is ruled out from its bytes, before anything is
    /// decoded (fzf's `asciiFuzzyIndex` does the same). A text with any other byte may match
    /// (folding a character beyond ASCII can give an ASCII one): it is decoded to find out.
    static func mayMatch(_ query: [UInt32], in bytes: UnsafeBufferPointer<UInt8>, folding: Bool) -> Bool {
        var next = 0
        for byte in bytes {
            if byte >= 0x80 { return true }
            let character = folding && byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if UInt32(character) == query[next] {
                next += 1
                if next == query.count { return true }
            }
        }
        return false
    }

    /// The text's scalars, as given and as matched.
    private mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>, folding: Bool) {
        original.removeAll(keepingCapacity: true)
        text.removeAll(keepingCapacity: true)
        // At most a character a byte: reserved at once, not doubled as it grows.
        original.reserveCapacity(bytes.count)
        text.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            var value: UInt32, size: Int
            switch lead {
            case 0..<0x80: (value, size) = (UInt32(lead), 1)
            case 0xC0..<0xE0: (value, size) = (UInt32(lead & 0x1F), 2)
            case 0xE0..<0xF0: (value, size) = (UInt32(lead & 0x0F), 3)
            default: (value, size) = (UInt32(lead & 0x07), 4)
            }
            for offset in 1..<max(size, 1) where index + offset < bytes.count {
                value = value << 6 | UInt32(bytes[index + offset] & 0x3F)
            }
            original.append(value)
            text.append(folding ? FuzzyPattern.folded(value) : value)
            index += size
        }
    }

    static func characterClass(_ value: UInt32) -> CharacterClass {
        if value < 0x80 {
            switch UInt8(value) {
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return .lower
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return .upper
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), 0x0B, 0x0C, UInt8(ascii: "\r"): return .white
            case UInt8(ascii: "/"), UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "|"): return .delimiter
            default: return .nonWord
            }
        }
        guard let scalar = Unicode.Scalar(value) else { return .nonWord }
        let properties = scalar.properties
        if properties.isLowercase { return .lower }
        if properties.isUppercase { return .upper }
        if properties.numericType != nil { return .number }
        if properties.isAlphabetic { return .letter }
        if properties.isWhitespace { return .white }
        return .nonWord
    }

    /// fzf's `bonusFor`: what a character of class `current` after one of `previous` earns.
    static func bonus(_ previous: CharacterClass, _ current: CharacterClass) -> Int32 {
        if current.rawValue > CharacterClass.nonWord.rawValue {
            switch previous {
            case .white: return bonusBoundaryWhite
            case .delimiter: return bonusBoundaryDelimiter
            case .nonWord: return bonusBoundary
            default: break
            }
        }
        if previous == .lower && current == .upper || previous != .number && current == .number { return bonusCamel123 }
        switch current {
        case .nonWord, .delimiter: return bonusNonWord
        case .white: return bonusBoundaryWhite
        default: return 0
        }
    }

    /// The best score of `pattern` in `bytes`, or nil: `match` without the positions.
    mutating func score(_ pattern: FuzzyPattern, in bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        match(pattern, in: bytes, positions: false).map { Int32(clamping: $0.score) }
    }

    /// The best match of `pattern` over the strings at `keyPaths` of `object`: the highest
    /// score, the first key path on ties; nil when none matches.
    mutating func bestMatch(
        _ pattern: FuzzyPattern, in object: JSON, keyPaths: [JSONKeyPath], positions: Bool
    ) -> (match: FuzzyMatch, keyPath: Int)? {
        var best: (match: FuzzyMatch, keyPath: Int)?
        for (index, keyPath) in keyPaths.enumerated() {
            object.withScalar(at: keyPath) { scalar in
                guard case .string(let bytes) = scalar, let found = match(pattern, in: bytes, positions: positions) else { return }
                if best == nil || found.score > best!.match.score { best = (found, index) }
            }
        }
        return best
    }
}
