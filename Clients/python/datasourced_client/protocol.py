"""The shapes of the wire protocol's values, as Protocol.md names them (TypedDicts).

Values stay plain JSON (dicts and lists) at run time; these types let a type checker
follow them. tests/test_openrpc.py checks that their members are those of
Protocol/openrpc.json. Members added by protocol 1.1 (``revision``, ``serverMessage``...)
and 1.2 (``cache``, ``stale``, ``refresh``...) are optional here: an older daemon does not
send them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "JSON", "IndexPath", "SourceKind", "PlaceholderKind",
    "RemoteConfiguration", "SortDescriptor", "PaginatorKeys", "RequestKeys", "Limits", "RetryAfter",
    "Pagination", "CacheSettings", "SourceConfig",
    "FetchError", "ChildFailure", "Move", "Changes", "ChangeValues", "NotificationParams",
    "CacheState", "RefreshState", "SourceDescription", "SourceSummary", "FetchResult", "NextPageResult", "Capabilities",
    "InitializeResult",
]

#: Any JSON value (rows are JSON values of any kind).
JSON: TypeAlias = Any
#: ``(section, item)``.
IndexPath: TypeAlias = tuple[int, int]
SourceKind: TypeAlias = Literal["simple", "sectioned", "multi", "remote", "paginated"]
PlaceholderKind: TypeAlias = Literal["loading", "noResults", "errors"]


# -- createSource ---------------------------------------------------------------------


class TLSFiles(TypedDict, total=False):
    """`remoteConfiguration.tls`: PEM files, absolute paths or `~/...` (Protocol.md, "TLS")."""

    caFile: str  # trusted in addition to SSL_CERT_FILE / SSL_CERT_DIR or the system store
    certificateFile: str  # a client certificate; needs keyFile
    keyFile: str  # its unencrypted private key; needs certificateFile


class RemoteConfiguration(TypedDict, total=False):
    """Where and how a remote or paginated source fetches (``remoteConfiguration``)."""
    baseURL: str  # required by the daemon; http or https
    headers: dict[str, str]
    timeoutSeconds: float
    tls: TLSFiles
    compression: bool  # false: no Accept-Encoding (gzip and deflate are decoded anyway)
    proxy: str | None  # http://[user:password@]host[:port]; None: direct; absent: the environment's


class SortDescriptor(TypedDict):
    """An order of a sectioned source's rows: a key path, ascending unless said."""
    keyPath: str
    ascending: NotRequired[bool]


class PaginatorKeys(TypedDict, total=False):
    """Where a page's metadata says the page size, current page, page count and total."""
    pageSize: str
    currentPage: str
    numberOfPages: str
    numberOfTotalObjects: str


class RequestKeys(TypedDict, total=False):
    """The query parameter names a page request uses for the page and its size."""
    currentPage: str
    pageSize: str


class Limits(TypedDict, total=False):
    """Bounds on a response: its body's bytes and its JSON's depth."""
    maxBodyBytes: int
    maxDepth: int


class RetryAfter(TypedDict, total=False):
    """How a source retries after ``429``/``503`` with ``Retry-After``."""
    maxRetries: int
    maxDelaySeconds: float


class Pagination(TypedDict, total=False):
    """How a paginated source finds its next page (Protocol.md, "Pagination strategies")."""

    strategy: Literal["pageNumber", "offset", "cursor", "nextURL", "linkHeader"]
    offsetKey: str
    limitKey: str
    nextOffsetPath: str
    cursorKey: str
    cursorPath: str
    cursorFromLastObject: str
    hasMorePath: str
    nextURLPath: str
    totalPath: str
    totalHeader: str
    maxPages: int
    maxPagesWithoutNewObjects: int
    endOnNotFound: bool
    allowCrossOrigin: bool
    duplicates: Literal["dropLater", "keep"]
    retryAfter: RetryAfter


class CacheSettings(TypedDict, total=False):
    """1.2: ``cache`` of a remote or paginated source: keep its loaded pages in the daemon's
    persisted cache, so that it opens at once next time (its rows marked ``stale`` until
    the server confirms or replaces them)."""

    enabled: bool  # required by the daemon
    maxAgeSeconds: float  # older entries are not shown
    maxPages: int  # pages stored (default 20)


class SourceConfig(TypedDict, total=False):
    """``createSource`` params besides ``name`` and ``kind``; which apply depends on the kind."""

    identityKey: str | None
    # simple
    objects: list[JSON]
    # sectioned
    source: str
    sectioningKey: str
    sortDescriptors: list[SortDescriptor]
    # multi
    sources: list[str]
    preserveSections: bool
    # remote and paginated
    remoteConfiguration: RemoteConfiguration
    apiPath: str
    queryParameters: dict[str, str | int | float | bool]
    keyPath: str
    mapping: dict[str, JSON]
    placeholderStorageOptions: int | list[PlaceholderKind]
    limits: Limits
    cache: CacheSettings  # 1.2
    refreshIntervalSeconds: float | None  # 1.2: a live list, refreshed this often (>= 1)
    # paginated
    paginatorKeys: PaginatorKeys
    requestKeys: RequestKeys
    pageSize: int
    firstPage: int
    metadataKeyPath: str
    prefetchDistance: int
    pagination: Pagination


# -- notifications --------------------------------------------------------------------


class FetchError(TypedDict, total=False):
    """A failed load's error (``failedWithError``, error placeholder rows, ``fetchData``
    results, ``lastError``); kind ``children`` (a multi source) has ``failures`` instead."""

    kind: str  # http, timeout, transport, decode, keyPath, mapping, cancelled, tooLarge, loop, crossOrigin, tls, proxy, children
    message: str
    status: int
    url: str
    finalURL: str  # 1.1: after redirects
    serverMessage: str  # 1.1: the server's own error text
    body: str  # 1.1: the first 2 KB of the failed response's body
    retryAfterSeconds: float  # 1.1
    reason: str  # 1.1, kind loop: first, page, offset, cursor, url, noNewObjects, maxPages
    pagesLoaded: int  # 1.1
    keyPath: str  # kind keyPath
    index: int  # kind mapping: index, field, expected, got
    field: str
    expected: str
    got: str
    line: int  # kind decode: line, column, position
    column: int
    position: int
    maxDepth: int  # kind tooLarge: maxDepth or maxBodyBytes
    maxBodyBytes: int
    source: str  # a sectioned source's failure names its child
    failures: list[ChildFailure]  # kind children


class ChildFailure(TypedDict):
    """One failed child of a multi source, in a ``FetchError``'s ``failures``."""
    source: str
    error: FetchError


# "from" is a keyword: the functional form is the only way to spell this one.
Move = TypedDict("Move", {"from": list[int], "to": list[int]})
Move.__doc__ = "A row moved by a ``didChange``: its index path before and after."


class Changes(TypedDict, total=False):
    """The index paths of a ``didChange``: sections and rows inserted, deleted, updated and moved."""
    deletedSections: list[int]
    insertedSections: list[int]
    deleted: list[list[int]]
    inserted: list[list[int]]
    moved: list[Move]
    updated: list[list[int]]


class ChangeValues(TypedDict, total=False):
    """1.1 with the ``changeValues`` capability: the rows at ``inserted`` and ``updated``."""

    inserted: list[JSON]
    updated: list[JSON]


class NotificationParams(TypedDict, total=False):
    """The params of a ``dataSource/...`` notification."""
    source: str
    error: FetchError
    changes: Changes
    revision: int  # 1.1
    previousRevision: int  # 1.1
    values: ChangeValues  # 1.1, with the changeValues capability
    stale: bool  # 1.2, didChangeFreshness
    cachedAt: str  # 1.2, didChangeFreshness while stale: RFC 3339, UTC


# -- results --------------------------------------------------------------------------


class CacheState(TypedDict, total=False):
    """1.2: a description's ``cache``, present when the source opted in."""

    enabled: bool
    maxAgeSeconds: float
    maxPages: int
    available: bool  # the daemon has a usable cache file


class RefreshState(TypedDict, total=False):
    """1.2: a live list's ``refresh``."""

    intervalSeconds: float
    nextRefreshAt: str  # RFC 3339, UTC
    consecutiveFailures: int
    lastError: FetchError  # of the last refresh, when it failed


class SourceDescription(TypedDict, total=False):
    """``describeSource`` (and ``createSource``): common members, then the kind's state
    (its configuration as created, and for remote and paginated sources their progress)."""

    name: str
    kind: SourceKind
    numberOfSections: int
    sectionTitles: list[JSON]
    counts: list[int]
    isFetching: bool
    revision: int  # 1.1
    identityKey: str
    children: list[str]
    # sectioned
    source: str
    sectioningKey: str
    sortDescriptors: list[SortDescriptor]
    # multi
    sources: list[str]
    preserveSections: bool
    # remote and paginated
    remoteConfiguration: RemoteConfiguration
    apiPath: str
    queryParameters: dict[str, str | int | float | bool]
    keyPath: str
    placeholderStorageOptions: int | list[PlaceholderKind]
    limits: Limits
    lastURL: str
    lastError: FetchError
    cache: CacheState  # 1.2, when the source opted in
    stale: bool  # 1.2, with cache: the rows are the persisted ones, not yet confirmed
    cachedAt: str  # 1.2, while stale: when they were stored or last confirmed (RFC 3339, UTC)
    refreshIntervalSeconds: float  # 1.2, live lists
    refresh: RefreshState  # 1.2, live lists
    # paginated
    paginatorKeys: PaginatorKeys
    requestKeys: RequestKeys
    pageSize: int
    firstPage: int
    metadataKeyPath: str
    prefetchDistance: int
    pagination: Pagination
    currentPage: int | None
    numberOfPages: int | None
    numberOfTotalResults: int | None
    hasMorePages: bool
    numberOfObjects: int  # data rows, placeholders not counted
    pagesLoaded: int
    nextPage: dict[str, JSON] | None
    duplicatesDropped: int


class SourceSummary(TypedDict):
    """One source of ``listSources``: its name and kind."""
    name: str
    kind: SourceKind


class FetchResult(TypedDict):
    """What ``fetchData`` answers; with ``wait``, how the load ended."""
    isFetching: bool
    outcome: NotRequired[Literal["finished", "failed"]]
    error: NotRequired[FetchError]


class NextPageResult(TypedDict):
    """What ``fetchNextPage`` answers: whether a page load started, and why not."""
    started: bool
    reason: NotRequired[str]


class Capabilities(TypedDict, total=False):
    """What the daemon can do, from ``initialize``."""
    methods: list[str]
    sourceKinds: list[str]
    notifications: list[str]
    batches: bool
    cancelRequest: bool
    maxMessageSize: int
    changeValues: bool  # 1.1, when asked for


class InitializeResult(TypedDict, total=False):
    """The answer to ``initialize``: protocol version, server info, capabilities."""
    protocolVersion: str
    serverInfo: dict[str, str]
    capabilities: Capabilities
