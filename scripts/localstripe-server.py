#!/usr/bin/env python3
# localstripe, the fake Stripe server, for the tests of Tender's stripe connector.
#
#     scripts/localstripe-server.py PORT      # PORT 0: the system picks a free port
#
# Starts localstripe's aiohttp application (the installed `localstripe` package, pinned at
# 1.15.10: `pip install localstripe==1.15.10`) on 127.0.0.1 only, with its own in-memory state,
# prints exactly one line `listening on http://127.0.0.1:PORT` to stdout once the socket
# accepts connections, and serves until killed (SIGTERM or SIGINT).
#
# Unlike `python -m localstripe`, which listens on every interface and loads and saves its
# state in /tmp/localstripe.pickle (so that every instance on the machine shares and clobbers
# the same data), each instance started here keeps its objects in memory only: tests can run
# several at once, and each starts empty. Set LOCALSTRIPE_ACCESS_LOG=1 for an access log on
# stderr. Needs Python 3.11 and nothing beyond localstripe and its aiohttp.

import asyncio
import logging
import os
import signal
import socket
import sys

EXPECTED_VERSION = "1.15.10"


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: localstripe-server.py PORT   (0 = any free port)", file=sys.stderr)
        return 2
    try:
        port = int(sys.argv[1])
        if not 0 <= port <= 65535:
            raise ValueError
    except ValueError:
        print(f"not a port: {sys.argv[1]!r}", file=sys.stderr)
        return 2

    import localstripe
    from localstripe import resources

    if localstripe.__version__ != EXPECTED_VERSION:
        print(
            f"warning: localstripe {localstripe.__version__} installed, "
            f"the connector's tests are written against {EXPECTED_VERSION}",
            file=sys.stderr,
        )

    # In-memory state: localstripe's Store pickles itself to /tmp/localstripe.pickle on every
    # write (Store.__setitem__/__delitem__ and a middleware after each POST/PUT/DELETE) and
    # `python -m localstripe` loads it at start. Disable both, before anything is stored.
    resources.Store.dump_to_disk = lambda self: None
    resources.Store.try_load_from_disk = lambda self: None
    resources.store.clear()

    from aiohttp import web
    from localstripe.server import app

    access_log = None
    if os.environ.get("LOCALSTRIPE_ACCESS_LOG") == "1":
        access_log = logging.getLogger("aiohttp.access")
        access_log.setLevel(logging.DEBUG)
        access_log.addHandler(logging.StreamHandler(sys.stderr))

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as e:
        print(f"cannot listen on 127.0.0.1:{port}: {e}", file=sys.stderr)
        return 1
    port = sock.getsockname()[1]

    async def serve() -> None:
        # Nothing to save at exit: a short shutdown_timeout makes SIGTERM quick.
        runner = web.AppRunner(
            app, access_log=access_log, handle_signals=False, shutdown_timeout=0.1
        )
        await runner.setup()
        await web.SockSite(runner, sock).start()  # listening from here on
        print(f"listening on http://127.0.0.1:{port}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
