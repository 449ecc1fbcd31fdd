"""A real ``tender serve`` per test session, on a fresh SQLite data dir and free ports; the
binary is ``$TENDER_BIN`` (CI builds it), else ``target/debug/tender`` under the repository."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from tender import Tender

REPO = Path(__file__).resolve().parents[3]


class Server:
    def __init__(self, base_url: str, secret_key: str, publishable_key: str) -> None:
        self.base_url = base_url
        self.secret_key = secret_key
        self.publishable_key = publishable_key


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    binary = os.environ.get("TENDER_BIN") or str(REPO / "target" / "debug" / "tender")
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--receipt-listen", "127.0.0.1:0",
             "--rate-limit", "0", "--data-dir", data],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdout is not None
        base = sk = pk = ""
        for line in proc.stdout:
            line = line.strip()
            if line.startswith("listening on "):
                base = line.removeprefix("listening on ")
            elif line.startswith("test secret key:"):
                sk = line.split(":", 1)[1].strip()
            elif line.startswith("test publishable key:"):
                pk = line.split(":", 1)[1].strip()
            elif line.startswith("receipts on "):
                break
        assert base and sk, "tender serve did not print its address and test key"
        try:
            yield Server(base, sk, pk)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture()
def client(server: Server) -> Iterator[Tender]:
    with Tender(server.secret_key, base_url=server.base_url) as c:
        yield c
