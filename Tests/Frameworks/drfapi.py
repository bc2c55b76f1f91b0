"""A real Django REST framework API, served on loopback for the paging tests: `/books/` is
ROWS books (`{"id": N, "title": "Book N"}`, ids from 0) through DRF's own
`PageNumberPagination` (`?page=N`, page size `?page_size=`, `count`, `next`, `previous`,
`results`) and `/books-offset/` through `LimitOffsetPagination`. No database: DRF's paginators
page any sequence, and a lazy one keeps a million rows out of memory.

Every request is counted, by path and query, so tests can say which pages were fetched."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import django
from django.conf import settings

if not settings.configured:
    settings.configure(
        DEBUG=False,
        SECRET_KEY="not-secret: a loopback test server",
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=["rest_framework"],
        MIDDLEWARE=[],
        REST_FRAMEWORK={"UNAUTHENTICATED_USER": None, "DEFAULT_PERMISSION_CLASSES": [],
                        "DEFAULT_AUTHENTICATION_CLASSES": [],
                        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]},
    )
    django.setup()

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.urls import path  # noqa: E402
from rest_framework.pagination import LimitOffsetPagination, PageNumberPagination  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework.views import APIView  # noqa: E402


class Books(Sequence[dict[str, Any]]):
    """ROWS books, made when read."""

    rows = 1000

    def __len__(self) -> int:
        return Books.rows

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        index %= len(self)
        return {"id": index, "title": f"Book {index}"}


class PageNumbers(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"


class BookPages(APIView):
    def get(self, request):  # type: ignore[no-untyped-def]
        paginator = PageNumbers()
        return paginator.get_paginated_response(paginator.paginate_queryset(Books(), request, view=self))


class BookOffsets(APIView):
    def get(self, request):  # type: ignore[no-untyped-def]
        paginator = LimitOffsetPagination()
        paginator.default_limit = 100
        return paginator.get_paginated_response(paginator.paginate_queryset(Books(), request, view=self))


urlpatterns = [path("books/", BookPages.as_view()), path("books-offset/", BookOffsets.as_view())]


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class DRFServer:
    """The API on an ephemeral loopback port; `requests` lists each request's path and query."""

    def __init__(self, rows: int = 1000) -> None:
        Books.rows = rows
        self.requests: list[str] = []
        application = get_wsgi_application()

        def counted(environ, start_response):  # type: ignore[no-untyped-def]
            query = environ.get("QUERY_STRING", "")
            self.requests.append(environ["PATH_INFO"] + ("?" + query if query else ""))
            return application(environ, start_response)

        self.server = make_server("127.0.0.1", 0, counted, server_class=_Server, handler_class=_QuietHandler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> DRFServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
