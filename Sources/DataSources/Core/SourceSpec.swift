import JSONKit

/// What `createSource` asks for, decoded and checked by the daemon's wire layer: the
/// model only resolves names (children, duplicates, cycles).
public struct SourceSpec: Sendable {
    public var name: String
    /// Says when two objects are the same object; nil: whole-value equality, or for
    /// composed sources their children's key when they all agree.
    public var identityKey: JSONKeyPath?
    public var kind: Kind

    public enum Kind: Sendable {
        case simple(objects: [JSON])
        case sectioned(source: String, sectioningKey: JSONKeyPath, sortDescriptors: [SortDescriptor])
        case multi(sources: [String], preserveSections: Bool)
        case remote(RemoteConfiguration)
        case paginated(RemoteConfiguration, PaginatorConfiguration)
        case filtered(source: String, filter: Predicate?, match: MatchQuery?)

        public var name: String {
            switch self {
            case .simple: "simple"
            case .sectioned: "sectioned"
            case .multi: "multi"
            case .remote: "remote"
            case .paginated: "paginated"
            case .filtered: "filtered"
            }
        }
    }

    public init(name: String, identityKey: JSONKeyPath?, kind: Kind) {
        self.name = name
        self.identityKey = identityKey
        self.kind = kind
    }
}

/// What `describeSource` reports, as values; the wire layer encodes it.
public struct SourceDescription: Sendable {
    public let name: String
    public let kind: String
    public let sectionTitles: [JSON]
    public let counts: [Int]
    public let isFetching: Bool
    public let identityKey: JSONKeyPath?
    public let children: [String]
    /// Bumped by every change to the rows.
    public let revision: Int
    public let state: KindState

    public enum KindState: Sendable {
        case simple
        case sectioned(source: String, sectioningKey: JSONKeyPath, sortDescriptors: [SortDescriptor])
        case multi(sources: [String], preserveSections: Bool)
        case remote(RemoteState)
        case paginated(RemoteState, PagingState)
        case filtered(source: String, filter: Predicate?, match: MatchQuery?)
    }

    public struct RemoteState: Sendable {
        public let configuration: RemoteConfiguration
        public let lastURL: String?
        public let lastError: FetchError?
        public let cache: CacheState
        /// nil: not a live list.
        public let refresh: RefreshSchedule?
        /// What the last response's headers said of the rate limit; nil until one did.
        public var rateLimit: RateLimitStatus?
    }

    public struct CacheState: Sendable {
        public let settings: CacheSettings
        /// Whether the daemon has a usable persisted cache for it (false with `--no-cache`, or degraded).
        public let isAvailable: Bool
        public let isStale: Bool
        public let cachedAt: Double?
    }

    public struct PagingState: Sendable {
        public let paginator: PaginatorConfiguration
        public let pageSize: Int?
        /// nil until a page has loaded.
        public let currentPage: Int?
        public let numberOfPages: Int?
        public let numberOfTotalResults: Int?
        public let hasMorePages: Bool
        /// Data rows, placeholders excluded.
        public let numberOfObjects: Int
        /// What the next page's request will be; nil when none remains.
        public let next: NextPage?
        /// Pages loaded since the first page of this run.
        public let pagesLoaded: Int
        /// Later duplicates of loaded objects left out in this run.
        public let duplicatesDropped: Int
    }

    /// The next page's request, as `describeSource` shows it (URLs without credentials).
    public enum NextPage: Sendable {
        case page(Int)
        case offset(Int)
        case cursor(String)
        case url(String)
    }
}
