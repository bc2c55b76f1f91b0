"""The shapes of the wire protocol's values, as Protocol.md names them (TypedDicts).

Values stay plain JSON (dicts and lists) at run time; these types let a type checker
follow them. Members added by protocol 1.1 (``revision``, ``serverMessage``...) are
optional: a 1.0 daemon does not send them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

__all__ = [
    "JSON", "IndexPath", "SourceKind", "PlaceholderKind",
    "RemoteConfiguration", "SortDescriptor", "PaginatorKeys", "RequestKeys", "Limits", "SourceConfig",
    "FetchError", "Move", "Changes", "ChangeValues", "NotificationParams",
    "SourceDescription", "SourceSummary", "FetchResult", "NextPageResult", "Capabilities",
    "InitializeResult",
]

#: Any JSON value (rows are JSON values of any kind).
JSON: TypeAlias = Any
#: ``(section, item)``.
IndexPath: TypeAlias = tuple[int, int]
SourceKind: TypeAlias = Literal["simple", "sectioned", "multi", "remote", "paginated"]
PlaceholderKind: TypeAlias = Literal["loading", "noResults", "errors"]


# -- createSource ---------------------------------------------------------------------


class RemoteConfiguration(TypedDict, total=False):
    baseURL: str  # required by the daemon; http or https
    headers: dict[str, str]
    timeoutSeconds: float


class SortDescriptor(TypedDict):
    keyPath: str
    ascending: NotRequired[bool]


class PaginatorKeys(TypedDict, total=False):
    pageSize: str
    currentPage: str
    numberOfPages: str
    numberOfTotalObjects: str


class RequestKeys(TypedDict, total=False):
    currentPage: str
    pageSize: str


class Limits(TypedDict, total=False):
    maxBodyBytes: int
    maxDepth: int


class SourceConfig(TypedDict, total=False):
    """``createSource`` params besides ``name`` and ``kind``; which apply depends on the kind."""

    identityKey: str
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
    # paginated
    paginatorKeys: PaginatorKeys
    requestKeys: RequestKeys
    pageSize: int
    firstPage: int
    metadataKeyPath: str


# -- notifications --------------------------------------------------------------------


class FetchError(TypedDict, total=False):
    """A failed load's error (``failedWithError``, error placeholder rows, ``fetchData`` results)."""

    kind: str  # http, timeout, transport, decode, keyPath, mapping, cancelled, tooLarge, children, loop...
    message: str
    status: int
    url: str
    serverMessage: str  # 1.1: the server's own error text
    body: str  # 1.1: the first 2 KB of the failed response's body
    finalURL: str  # 1.1: after redirects
    retryAfterSeconds: float  # 1.1
    source: str  # a sectioned source's failure names its child
    failures: list[dict[str, JSON]]  # kind "children"


# "from" is a keyword: the functional form is the only way to spell this one.
Move = TypedDict("Move", {"from": list[int], "to": list[int]})


class Changes(TypedDict, total=False):
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
    source: str
    error: FetchError
    changes: Changes
    revision: int  # 1.1
    previousRevision: int  # 1.1
    values: ChangeValues  # 1.1, with the changeValues capability


# -- results --------------------------------------------------------------------------


class SourceDescription(TypedDict, total=False):
    """``describeSource`` (and ``createSource``): common members, then the kind's state."""

    name: str
    kind: SourceKind
    numberOfSections: int
    sectionTitles: list[JSON]
    counts: list[int]
    isFetching: bool
    identityKey: str
    children: list[str]
    revision: int  # 1.1
    # paginated
    pageSize: int
    currentPage: int | None
    numberOfPages: int | None
    numberOfTotalResults: int | None
    hasMorePages: bool
    numberOfObjects: int
    # remote and paginated
    lastURL: str | None
    lastError: FetchError | None


class SourceSummary(TypedDict):
    name: str
    kind: SourceKind


class FetchResult(TypedDict):
    isFetching: bool
    outcome: NotRequired[Literal["finished", "failed"]]
    error: NotRequired[FetchError]


class NextPageResult(TypedDict):
    started: bool
    reason: NotRequired[str]


class Capabilities(TypedDict, total=False):
    methods: list[str]
    sourceKinds: list[str]
    notifications: list[str]
    batches: bool
    cancelRequest: bool
    maxMessageSize: int
    changeValues: bool  # 1.1, when asked for


class InitializeResult(TypedDict, total=False):
    protocolVersion: str
    serverInfo: dict[str, str]
    capabilities: Capabilities
