"""The asyncio client: load the fixture books API page by page, following the
notifications as an async iterator, then print the books grouped by genre.

    DATASOURCED=.build/debug/datasourced python3 Clients/python/examples/async_books.py

It serves Clients/fixtures.json itself (``datasourced fixtures``), which answers
``page_size=4`` only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from datasourced_client import AsyncClient, Event, daemon_command
from datasourced_client.fixtures import FixtureServer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures.json"


async def main() -> None:
    command = daemon_command()  # $DATASOURCED, else datasourced on the PATH
    with FixtureServer(command[0], FIXTURES) as api:
        async with AsyncClient.spawn(command) as client:
            books = await client.create_source(
                "books", kind="paginated", identityKey="id", keyPath="books", pageSize=4,
                remoteConfiguration={"baseURL": api.base_url}, apiPath="/v1/books")
            by_genre = await client.create_source("byGenre", kind="sectioned", source="books",
                                                  sectioningKey="genre")

            async def follow(events: AsyncIterator[Event]) -> None:
                async for event in events:
                    if event.is_final:
                        print(f"  {event.source} {event.kind}")

            async with client.events() as events:
                follower = asyncio.create_task(follow(events))
                await books.fetch_all_pages()
                events.close()
                await follower
            for section in (await by_genre.snapshot()).sections:
                print(f"{section.title}: {', '.join(book['title'] for book in section.rows)}")


if __name__ == "__main__":
    asyncio.run(main())
