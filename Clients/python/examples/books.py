"""The blocking client: load the fixture books API page by page, then print the books
grouped by genre.

    DATASOURCED=.build/debug/datasourced python3 Clients/python/examples/books.py

It serves Clients/fixtures.json itself (``datasourced fixtures``), which answers
``page_size=4`` only.
"""

from __future__ import annotations

from pathlib import Path

from datasourced_client import Client, DataSource, Event, daemon_command
from datasourced_client.fixtures import FixtureServer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures.json"


def main() -> None:
    command = daemon_command()  # $DATASOURCED, else datasourced on the PATH
    with FixtureServer(command[0], FIXTURES) as api, Client.spawn(command) as client:
        books = client.create_source(
            "books", kind="paginated", identityKey="id", keyPath="books", pageSize=4,
            remoteConfiguration={"baseURL": api.base_url}, apiPath="/v1/books")
        by_genre = client.create_source("byGenre", kind="sectioned", source="books", sectioningKey="genre",
                                        sortDescriptors=[{"keyPath": "year", "ascending": False}])

        def on_change(event: Event) -> None:
            if event.kind == "didChange" and event.changes:
                print(f"  {event.source}: {len(event.changes.get('inserted', []))} inserted")

        by_genre.on_event(on_change)

        def on_page(number: int, source: DataSource) -> None:
            print(f"page {number}: {source.count_objects()} books")

        books.fetch_all_pages(on_page)
        for section in by_genre.snapshot().sections:
            print(f"{section.title}: {', '.join(book['title'] for book in section.rows)}")


if __name__ == "__main__":
    main()
