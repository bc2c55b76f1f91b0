/// `describeSource`'s account of a paginated source: its remote state and where paging stands.
extension PaginatedDataSource {
    var pagingState: SourceDescription.PagingState {
        SourceDescription.PagingState(
            paginator: paginator, pageSize: run.metadata.pageSize ?? paginator.pageSize, currentPage: loadedOnce ? currentPage : nil,
            numberOfPages: run.metadata.numberOfPages, numberOfTotalResults: run.metadata.numberOfTotalResults,
            hasMorePages: hasMorePages, numberOfObjects: objects.count, next: paginator.shown(run.plan.next),
            pagesLoaded: run.plan.pagesLoaded, duplicatesDropped: run.duplicates.dropped, loadStates: loads.published,
            previous: paginator.shown(run.plan.previous), pagesDropped: run.window.pagesDropped,
            placeholders: SourceDescription.PlaceholdersState(
                inForce: counted.shown != nil ? .counted : .trailing, refusal: counted.refusal),
            capabilities: SourceDescription.PagingCapabilities(pageBackwards: paginator.previousPageUnsupported, jump: jumpRefusal),
            jumps: jumps.made)
    }
}
