"""The test servers outlive frozen clocks (the suite's own harness).

A server thread of the session (the fake model) runs while tests freeze the clock with
freezegun. Its loop timed uvicorn's 0.1 s tick against ``time.monotonic`` while freezegun was
between freezing that and handing asyncio loops the real clock back (``real_asyncio``): the
tick was then due at the frozen instant, decades on, and the server never saw its stop (the
session's end waited out 32 s of join timeouts). The servers' loops read a clock freezegun
does not replace.
"""

from __future__ import annotations

import time

from freezegun import freeze_time
from stage_servers import FakeModel, RealTimeLoop, ServerThread


def test_a_server_loop_keeps_real_time_while_the_clock_is_frozen() -> None:
    loop = RealTimeLoop()
    try:
        with freeze_time("2026-12-01 12:00:00") as frozen:  # no real_asyncio: the worst case
            frozen.tick(3600)
            assert abs(loop.time() - time.clock_gettime(time.CLOCK_MONOTONIC)) < 60
            assert time.monotonic() > loop.time() + 1e9  # what any other loop would read
    finally:
        loop.close()


def test_a_server_thread_stops_after_clocks_were_frozen_around_it() -> None:
    model = FakeModel()
    model.server = server = ServerThread(model.app())
    for _ in range(40):  # each freeze and thaw is a window the old loop's tick could fall in
        with freeze_time("2026-12-01 12:00:00", real_asyncio=True) as frozen:
            frozen.tick(1)
            time.sleep(0.005)
        time.sleep(0.005)
    server.server.should_exit = True
    server.thread.join(timeout=10)  # the graceful stop: the loop's next tick sees should_exit
    stuck = server.thread.is_alive()
    server.stop()
    assert not stuck
