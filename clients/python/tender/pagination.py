"""Lists: a :class:`Page` of objects, newest first, and an iterator over every page
(``starting_after`` the last id of the page before, the same filters)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Iterator, Mapping, TypeVar

if TYPE_CHECKING:
    from ._http import Transport

T = TypeVar("T")


class Page(Generic[T]):
    """One page of a list: ``data``, ``has_more``; iterating a page yields its objects."""

    def __init__(self, transport: Transport, path: str, params: Mapping[str, Any]) -> None:
        self._t = transport
        self._path = path
        self._params = dict(params)
        body = transport.request("GET", path, params=self._params)
        self.data: list[T] = list(body.get("data", []))
        self.has_more: bool = bool(body.get("has_more", False))

    def __iter__(self) -> Iterator[T]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def next_page(self) -> Page[T] | None:
        """The page after this one (older objects), or ``None`` at the end."""
        if not self.has_more or not self.data:
            return None
        last = self.data[-1]
        params = {k: v for k, v in self._params.items() if k != "ending_before"}
        params["starting_after"] = _id(last)
        return Page(self._t, self._path, params)

    def auto_paging_iter(self) -> Iterator[T]:
        """Every object of this page and the pages after it, fetching them as needed."""
        page: Page[T] | None = self
        while page is not None:
            yield from page.data
            page = page.next_page()


def _id(obj: Any) -> str:
    return str(obj["id"])
