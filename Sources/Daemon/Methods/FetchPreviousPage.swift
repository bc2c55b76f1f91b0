import DataSources

/// `fetchPreviousPage`: loads the page before the first one a paginated source has loaded.
enum FetchPreviousPageRequest: PageStepRequest {
    static let name = "fetchPreviousPage"
    static let section = "paging-backwards"
    static let direction = LoadDirection.prepend
    static let summary = "loads the page before the first one a paginated source has loaded, inserting its rows at the top"
}
