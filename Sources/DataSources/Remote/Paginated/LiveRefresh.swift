import JSONKit

/// A live list's refresh: the pages held walked again from the first, each conditionally
/// when its request is the one that loaded it, following the next requests the responses
/// give, until as many pages as were held are walked (or the run ends sooner).
///
/// Each response is an event answering the next request, the end of the walk, or its
/// failure; the owner replaces the rows once, at the end, if any page came back different.
struct LiveRefresh {
    /// What the owner does next.
    enum Action {
        case request(PageRequest, validators: Validators?)
        /// The walk is over: `walked` is the run now, `changed` when a page came back different.
        case finish
        /// A request failed: the rows stay as they are.
        case fail(FetchError)
    }

    /// The pages walked, with their rows.
    private(set) var walked: [(page: LoadedPage, rows: [JSON])] = []
    /// Whether a page came back different (a `200`, not a `304`).
    private(set) var changed = false
    /// The page asked for, as it was held when asked for (nil when it is not the page held there).
    private var asked: (request: PageRequest, held: LoadedPage?)?

    /// The walk starts at the first page held (`held` is not empty).
    mutating func start(held: [LoadedPage]) -> Action {
        walked = []
        changed = false
        return ask(held[0].request, held: held)
    }

    /// The page asked for is unchanged (`304`): its rows are the ones held.
    mutating func notModified(_ response: DecodedResponse, held: [LoadedPage], objects: [JSON], errorURL: String?) -> Action {
        guard var page = asked?.held else {
            return .fail(FetchError(kind: .http, message: "HTTP status 304 to an unconditional request", url: errorURL, status: 304))
        }
        let index = walked.count
        let start = held[..<index].reduce(0) { $0.addingClamped($1.kept) }
        page.validators = Validators(headers: response, keeping: page.validators)
        walked.append((page, Array(objects[start..<start + page.kept])))
        return following(held: held)
    }

    /// The page asked for came back (`200`): read by `plan` as a run read it, from where the
    /// run starts in the list (`runStart`).
    mutating func arrived(
        _ response: DecodedResponse, plan: RequestPlan, links: LinkContext, runStart: Int, held: [LoadedPage]
    ) -> Action {
        guard let request = asked?.request else { return .finish }
        let received = walked.reduce(0) { $0.addingClamped($1.page.received) }.addingClamped(response.objects.count)
        let metadata = plan.paginator.metadata(of: response)
        let next =
            (try? plan.nextPage(
                after: request, response: response, metadata: metadata, objectsReceived: runStart.addingClamped(received), links: links
            ).get()) ?? nil
        let before = walked.isEmpty ? (try? plan.previousPage(before: request, response: response, links: links).get()) ?? nil : nil
        walked.append(
            (
                LoadedPage(
                    request: request, validators: Validators(headers: response), kept: response.objects.count,
                    received: response.objects.count, next: next, metadata: metadata, previous: before),
                response.objects
            ))
        changed = true
        return following(held: held)
    }

    /// The answer to the page asked for, whichever it is: a failed request ends the walk, the
    /// rows staying as they are.
    mutating func answered(
        _ result: Result<DecodedResponse, FetchError>, plan: RequestPlan, links: LinkContext, runStart: Int, held: [LoadedPage],
        objects: [JSON]
    ) -> Action {
        switch result {
        case .failure(let error): .fail(error)
        case .success(let response) where response.isNotModified:
            notModified(response, held: held, objects: objects, errorURL: links.errorURL)
        case .success(let response): arrived(response, plan: plan, links: links, runStart: runStart, held: held)
        }
    }

    /// Whether the pages held came back as they were, and as many: only their validators change.
    func unchanged(held: [LoadedPage]) -> Bool { !changed && walked.count == held.count }

    /// The next page of the walk, or its end: as many pages as were held, a run that ends
    /// sooner, or a next request already walked.
    private mutating func following(held: [LoadedPage]) -> Action {
        let last = walked[walked.count - 1].page
        guard walked.count < held.count, let next = last.next, !walked.contains(where: { $0.page.request == next }) else {
            asked = nil
            return .finish
        }
        return ask(next, held: held)
    }

    private mutating func ask(_ request: PageRequest, held: [LoadedPage]) -> Action {
        let index = walked.count
        let page = held[index].request == request ? held[index] : nil
        asked = (request, page)
        return .request(request, validators: page?.validators)
    }
}
