"""A real Django REST framework API, served on loopback for the paging tests: `/books/` is
ROWS books (`{"id": N, "title": "Book N"}`, ids from 0) through DRF's own
`PageNumberPagination` (`?page=N`, page size `?page_size=`, `count`, `next`, `previous`,
`results`) and `/books-offset/` through `LimitOffsetPagination`. No database for those: DRF's
paginators page any sequence, and a lazy one keeps a million rows out of memory.

`/library/` is a `ModelViewSet` of `Book` rows (`id`, `title`, `genre`, `year`, `version`) in
an SQLite file of the process, for the actions tests (test_drf_actions.py): list (paged as
`/books/`), create (`POST`), retrieve, update and partial update (`PUT`, `PATCH`), destroy
(`DELETE`), with DRF's own validation errors (`{"title": ["This field may not be blank."]}`).
Each update raises the row's `version`; an update or delete whose `If-Match` header is not the
row's version is answered `412`; `unavailable_for(n)` has the next n updates answered `503`
with `Retry-After: 1`. Each server starts with LIBRARY's books, ids from 1.

Every request is counted, by path and query, so tests can say which pages were fetched; each
request that changes the library is recorded in `mutations` (method, path, the
`Idempotency-Key` and `If-Match` headers it carried, the status answered)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import django
from django.conf import settings

from django.apps import AppConfig


class LibraryApp(AppConfig):
    """The app `Book` belongs to: this module."""

    name = __name__
    label = "library"
    path = os.path.dirname(os.path.abspath(__file__))
    default_auto_field = "django.db.models.AutoField"


_database_dir = tempfile.mkdtemp(prefix="drfapi-")
atexit.register(shutil.rmtree, _database_dir, True)

if not settings.configured:
    settings.configure(
        DEBUG=False,
        SECRET_KEY="not-secret: a loopback test server",
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        ROOT_URLCONF=__name__,
        INSTALLED_APPS=["rest_framework", f"{__name__}.LibraryApp"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3",
                               "NAME": os.path.join(_database_dir, "library.sqlite3")}},
        MIDDLEWARE=[],
        REST_FRAMEWORK={"UNAUTHENTICATED_USER": None, "DEFAULT_PERMISSION_CLASSES": [],
                        "DEFAULT_AUTHENTICATION_CLASSES": [],
                        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]},
    )
    django.setup()

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.db import connection, models  # noqa: E402
from django.urls import path  # noqa: E402
from rest_framework import serializers, viewsets  # noqa: E402
from rest_framework.pagination import LimitOffsetPagination, PageNumberPagination  # noqa: E402
from rest_framework.response import Response  # noqa: E402
from rest_framework.routers import DefaultRouter  # noqa: E402
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


class Book(models.Model):
    title = models.CharField(max_length=200)
    genre = models.CharField(max_length=100, blank=True, default="")
    year = models.IntegerField(null=True, blank=True)
    version = models.IntegerField(default=1)

    class Meta:
        app_label = "library"
        ordering = ["id"]


#: The library each DRFServer starts with (ids 1, 2, 3... in this order).
LIBRARY = [
    {"title": "Dune", "genre": "science fiction", "year": 1965},
    {"title": "Gaudy Night", "genre": "mystery", "year": 1935},
    {"title": "Ariel", "genre": "poetry", "year": 1965},
    {"title": "Solaris", "genre": "science fiction", "year": 1961},
    {"title": "Beloved", "genre": "fiction", "year": 1987},
]


class BookSerializer(serializers.ModelSerializer):
    class Meta:
        model = Book
        fields = ["id", "title", "genre", "year", "version"]
        read_only_fields = ["version"]


#: Each request that changed (or tried to change) the library, in order (see DRFServer.mutations).
MUTATIONS: list[dict[str, Any]] = []
#: How many of the next updates answer 503 with Retry-After: 1 (DRFServer.unavailable_for).
UNAVAILABLE = [0]


class BookViewSet(viewsets.ModelViewSet):
    queryset = Book.objects.all()
    serializer_class = BookSerializer
    pagination_class = PageNumbers

    def initial(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().initial(request, *args, **kwargs)
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            MUTATIONS.append({"method": request.method, "path": request.path,
                              "idempotencyKey": request.headers.get("Idempotency-Key"),
                              "ifMatch": request.headers.get("If-Match")})

    def finalize_response(self, request, response, *args, **kwargs):  # type: ignore[no-untyped-def]
        if request.method in ("POST", "PUT", "PATCH", "DELETE") and MUTATIONS:
            MUTATIONS[-1]["status"] = response.status_code
        return super().finalize_response(request, response, *args, **kwargs)

    def _precondition_failed(self, request, book: Book) -> Response | None:  # type: ignore[no-untyped-def]
        """412 when If-Match is given and is not the row's version (quoted or not, W/ or not)."""
        expected = request.headers.get("If-Match")
        if expected is None or expected.strip() == "*":
            return None
        given = expected.strip().removeprefix("W/").strip('"')
        if given == str(book.version):
            return None
        return Response({"detail": f"If-Match {expected!r} is not the book's version {book.version}: "
                                   "someone changed it since you read it."}, status=412)

    def update(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        if UNAVAILABLE[0] > 0:  # DRFServer.unavailable_for(n): the next n updates answer 503
            UNAVAILABLE[0] -= 1
            return Response({"detail": "Down for maintenance."}, status=503, headers={"Retry-After": "1"})
        refused = self._precondition_failed(request, self.get_object())
        return refused or super().update(request, *args, **kwargs)

    def perform_update(self, serializer):  # type: ignore[no-untyped-def]
        serializer.save(version=serializer.instance.version + 1)

    def destroy(self, request, *args, **kwargs):  # type: ignore[no-untyped-def]
        refused = self._precondition_failed(request, self.get_object())
        return refused or super().destroy(request, *args, **kwargs)


router = DefaultRouter()
router.register("library", BookViewSet)

urlpatterns = [path("books/", BookPages.as_view()), path("books-offset/", BookOffsets.as_view()), *router.urls]


def reset_library() -> None:
    """The table, created if need be, holding LIBRARY's books alone (ids from 1 again)."""
    with connection.cursor() as cursor:
        tables = connection.introspection.table_names(cursor)
    if Book._meta.db_table not in tables:
        with connection.schema_editor() as editor:
            editor.create_model(Book)
    Book.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM sqlite_sequence WHERE name = %s", [Book._meta.db_table])
    for book in LIBRARY:
        Book.objects.create(**book)


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
        reset_library()
        MUTATIONS.clear()
        UNAVAILABLE[0] = 0
        #: The library's changes asked for: method, path, idempotencyKey, ifMatch, status.
        self.mutations = MUTATIONS
        application = get_wsgi_application()

        def counted(environ, start_response):  # type: ignore[no-untyped-def]
            query = environ.get("QUERY_STRING", "")
            self.requests.append(environ["PATH_INFO"] + ("?" + query if query else ""))
            return application(environ, start_response)

        self.server = make_server("127.0.0.1", 0, counted, server_class=_Server, handler_class=_QuietHandler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def unavailable_for(self, updates: int) -> None:
        """The next ``updates`` updates of the library answer 503 with Retry-After: 1."""
        UNAVAILABLE[0] = updates

    def __enter__(self) -> DRFServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
