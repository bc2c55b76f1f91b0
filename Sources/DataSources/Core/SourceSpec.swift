import JSONKit

/// What `createSource` asks for, decoded and checked by the daemon's wire layer: the
/// model only resolves names (children, duplicates, cycles).
package struct SourceSpec: Sendable {
    package var name: String
    /// Says when two objects are the same object; nil: whole-value equality, or for
    /// composed sources their children's key when they all agree.
    package var identityKey: JSONKeyPath?
    package var kind: Kind

    package enum Kind: Sendable {
        case simple(objects: [JSON])
        case sectioned(source: String, sectioningKey: JSONKeyPath, sortDescriptors: [SortDescriptor])
        case multi(sources: [String], preserveSections: Bool)
        case remote(RemoteConfiguration)
        case paginated(RemoteConfiguration, PaginatorConfiguration)
        case filtered(source: String, filter: Predicate?, match: MatchQuery?, fill: Int?)

        package var name: String {
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

    package init(name: String, identityKey: JSONKeyPath?, kind: Kind) {
        self.name = name
        self.identityKey = identityKey
        self.kind = kind
    }
}

/// What `describeSource` reports, as values; the wire layer encodes it.
package struct SourceDescription: Sendable {
    package let name: String
    package let kind: String
    package let sectionTitles: [JSON]
    package let counts: [Int]
    package let isFetching: Bool
    package let identityKey: JSONKeyPath?
    package let children: [String]
    /// Bumped by every change to the rows.
    package let revision: Int
    package let state: KindState

    package enum KindState: Sendable {
        case simple
        case sectioned(source: String, sectioningKey: JSONKeyPath, sortDescriptors: [SortDescriptor])
        case multi(sources: [String], preserveSections: Bool)
        case remote(RemoteState)
        case paginated(RemoteState, PagingState)
        case filtered(source: String, filter: Predicate?, match: MatchQuery?, fill: Int?)
    }

    package struct RemoteState: Sendable {
        package let configuration: RemoteConfiguration
        package let lastURL: String?
        package let lastError: FetchError?
        /// What went wrong beside the rows of the last response that said so (a GraphQL
        /// response's `errors` next to its data); nil after a new load from the first page.
        package var lastWarning: FetchError?
        package let cache: CacheState
        /// nil: not a live list.
        package let refresh: RefreshSchedule?
        /// What the last response's headers said of the rate limit; nil until one did.
        package var rateLimit: RateLimitStatus?
        /// The actions called and not yet settled, in the order made.
        package var pendingMutations: [Mutation] = []
    }

    package struct CacheState: Sendable {
        package let settings: CacheSettings
        /// Whether the daemon has a usable persisted cache for it (false with `--no-cache`, or degraded).
        package let isAvailable: Bool
        package let isStale: Bool
        package let cachedAt: Double?
    }

    package struct PagingState: Sendable {
        package let paginator: PaginatorConfiguration
        package let pageSize: Int?
        /// nil until a page has loaded.
        package let currentPage: Int?
        package let numberOfPages: Int?
        package let numberOfTotalResults: Int?
        package let hasMorePages: Bool
        /// Data rows, placeholders excluded.
        package let numberOfObjects: Int
        /// What the next page's request will be; nil when none remains.
        package let next: PageRequest?
        /// Pages loaded since the first page of this run.
        package let pagesLoaded: Int
        /// Later duplicates of loaded objects left out in this run.
        package let duplicatesDropped: Int
        package let loadStates: LoadStates
        /// What the request for the page before the first one loaded will be; nil when none.
        package let previous: PageRequest?
        /// Pages the window dropped in this run.
        package let pagesDropped: Int
        package let placeholders: PlaceholdersState
        package let capabilities: PagingCapabilities
        /// Jumps made (a far unloaded row displayed, its page loaded as a new run).
        package let jumps: Int
    }

    /// The placeholder mode in force (`paginator.placeholderMode` is the one asked for), and
    /// why counted placeholders, asked for, are not.
    package struct PlaceholdersState: Sendable {
        package let inForce: PaginatorConfiguration.PlaceholderMode
        package let refusal: String?
    }

    /// What a paginated source can do: each nil when it can, else why not.
    package struct PagingCapabilities: Sendable {
        package let pageBackwards: String?
        package let jump: String?
    }
}
