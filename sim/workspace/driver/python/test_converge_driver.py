"""Tests of converge_driver (stdlib unittest; run by sim/workspace/driver's Go tests)."""

from __future__ import annotations

import copy
import datetime as dt
import io
import json
import random
import unittest

import converge_driver as cd


def lines(*msgs: dict) -> io.BytesIO:
    return io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))


def sent(out: io.BytesIO) -> list:
    return [json.loads(line) for line in out.getvalue().splitlines()]


HELLO = {"type": "hello", "protocol": 1, "role": "coordinator", "instance": "coord-1",
         "limits": {"max_running_per_user": 2, "max_running_global": 100}}
T0 = "2026-01-05T00:00:00Z"
T0_NS = 1767571200 * cd.NS


class TimeTest(unittest.TestCase):
    def test_round_trip_to_the_nanosecond(self) -> None:
        r = random.Random(7)
        for _ in range(5000):
            ns = r.randrange(0, 4 * 10**18)
            self.assertEqual(cd.parse_time(cd.format_time(ns)), ns)

    def test_agrees_with_datetime(self) -> None:
        r = random.Random(8)
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        for _ in range(2000):
            us = r.randrange(0, 4 * 10**15)
            want = (epoch + dt.timedelta(microseconds=us)).strftime("%Y-%m-%dT%H:%M:%S")
            self.assertEqual(cd.format_time(us * 1000)[:19], want)

    def test_formats_like_go(self) -> None:
        self.assertEqual(cd.format_time(T0_NS), T0)
        self.assertEqual(cd.format_time(T0_NS + 1_500_000_000), "2026-01-05T00:00:01.5Z")
        self.assertEqual(cd.format_time(T0_NS + 7), "2026-01-05T00:00:00.000000007Z")
        self.assertIsNone(cd.format_time(None))

    def test_parses_offsets_and_rejects_garbage(self) -> None:
        self.assertEqual(cd.parse_time("2026-01-05T01:00:01.5+01:00"), T0_NS + 1_500_000_000)
        self.assertEqual(cd.parse_time("2026-01-04T23:00:00-01:00"), T0_NS)
        self.assertIsNone(cd.parse_time(None))
        for bad in ("2026-01-05", "2026-13-05T00:00:00Z", "2026-01-05T00:00:00", "yesterday", "2026-01-05T00:00:00.1234567890Z"):
            with self.assertRaises(cd.ProtocolError, msg=bad):
                cd.parse_time(bad)


class ErrorTest(unittest.TestCase):
    def test_every_name_maps_to_its_exception(self) -> None:
        for name, cls in (("not_found", cd.NotFound), ("fenced", cd.Fenced), ("not_leader", cd.NotLeader),
                          ("crashed", cd.Crashed), ("unavailable", cd.Unavailable)):
            e = cd.error_from_wire({"name": name, "text": "x: " + name})
            self.assertIsInstance(e, cls)
            self.assertEqual(str(e), "x: " + name)
        p = cd.error_from_wire({"name": "provider", "text": "DISK_FULL: no room", "code": "DISK_FULL",
                                "message": "no room", "context": {"free": 0}})
        self.assertIsInstance(p, cd.ProviderError)
        self.assertEqual((p.code, p.message, p.context), ("DISK_FULL", "no room", {"free": 0}))
        a = cd.error_from_wire({"name": "api", "text": "x", "status": 409, "code": "INVALID_STATE", "message": "busy"})
        self.assertEqual((a.status, a.code, a.message), (409, "INVALID_STATE", "busy"))
        self.assertIsInstance(cd.error_from_wire({"name": "error", "text": "other"}), cd.PortError)
        with self.assertRaises(cd.ProtocolError):
            cd.error_from_wire({"name": "kaboom", "text": "x"})

    def test_api_errors_cross_back_with_their_details(self) -> None:
        e = cd.APIError(429, "workspace_limit_exceeded", "limit", {"limit_type": "per_user", "current": 2, "max": 2})
        self.assertEqual(e.to_wire(), {"name": "api", "text": "workspace_limit_exceeded: limit", "status": 429,
                                       "code": "workspace_limit_exceeded", "message": "limit",
                                       "limit": {"limit_type": "per_user", "current": 2, "max": 2}})


class Leader:
    """Takes the lock at its first step, then reads a row and writes it."""

    def __init__(self, ports: cd.Ports) -> None:
        self.p = ports
        self.lease = None
        self.seen: list = []

    def is_leader(self) -> bool:
        return self.lease is not None

    def step(self) -> int:
        self.lease = self.p.try_acquire(self.p.instance)
        row = self.p.store_get("w1")
        self.seen.append(row["observed_at"])
        self.p.store_update({"component": "health_monitor", "instance": "coord-1", "epoch": self.lease.epoch},
                            "w1", {"operation": "NONE"}, {"observed_at": self.p.now})
        self.p.note("stepped")
        return self.p.now + cd.NS


class SessionTest(unittest.TestCase):
    def test_a_coordinator_session(self) -> None:
        row = {"id": "w1", "observed_at": "2026-01-04T23:59:59.5Z", "error_info": None}
        stdin = lines(HELLO, {"type": "step", "now": T0},
                      {"type": "ok", "value": {"ok": True, "lease": 1, "epoch": 7}},
                      {"type": "ok", "value": row},
                      {"type": "ok", "value": {"applied": True}})
        stdout, stderr = io.BytesIO(), io.StringIO()
        made: list = []

        def build(ports: cd.Ports) -> Leader:
            made.append(Leader(ports))
            return made[0]

        cd.serve(coordinator=build, name="t", stdin=stdin, stdout=stdout, stderr=stderr)
        out = sent(stdout)
        self.assertEqual(out[0], {"type": "ready", "protocol": 1, "name": "t", "stderr_sync": True})
        self.assertEqual(out[1], {"type": "call", "method": "leadership.try_acquire", "args": {"holder": "coord-1"}, "leader": False})
        # The flag goes with the first call after it changed.
        self.assertEqual(out[2], {"type": "call", "method": "store.get", "args": {"id": "w1"}, "leader": True})
        self.assertEqual(out[3]["args"]["patch"], {"observed_at": T0}, "integer times cross as RFC 3339")
        self.assertNotIn("leader", out[3])
        self.assertEqual(out[4], {"type": "note", "text": "stepped"})
        self.assertEqual(out[5], {"type": "done", "next": "2026-01-05T00:00:01Z", "leader": True})
        self.assertEqual(made[0].seen, [T0_NS - cd.NS // 2], "row times arrive as integers")
        self.assertEqual(stderr.getvalue(), cd.STDERR_MARKER * 2, "a marker before ready and before done")
        self.assertEqual(made[0].p.max_running_per_user, 2)

    def test_a_port_error_is_raised_and_a_step_error_reported(self) -> None:
        class Dies:
            def __init__(self, ports: cd.Ports) -> None:
                self.p = ports

            def is_leader(self) -> bool:
                return False

            def step(self) -> int:
                try:
                    self.p.store_get("w1")
                except cd.NotFound as e:
                    raise cd.Crashed("gave up: " + str(e)) from None
                return 0

        stdin = lines(HELLO, {"type": "step", "now": T0}, {"type": "error", "error": {"name": "not_found", "text": "not found"}})
        stdout = io.BytesIO()
        cd.serve(coordinator=Dies, stdin=stdin, stdout=stdout, stderr=io.StringIO())
        done = sent(stdout)[-1]
        self.assertEqual(done, {"type": "done", "error": {"name": "crashed", "text": "gave up: not found"}, "leader": False})

    def test_an_api_session(self) -> None:
        class API:
            def __init__(self, ports: cd.Ports) -> None:
                self.p = ports

            def create(self, user: str, req: dict) -> dict:
                return {"id": self.p.new_id(), "owner_user_id": user, "name": req["name"], "created_at": self.p.now}

            def delete(self, user: str, id: str) -> None:
                raise cd.APIError(409, "INVALID_STATE", "operation STARTING is in progress")

        stdin = lines({**HELLO, "role": "api", "instance": "api"},
                      {"type": "api", "method": "create", "now": T0, "args": {"user": "u1", "create": {"name": "dev", "image_ref": "i"}}},
                      {"type": "ok", "value": "id-1"},
                      {"type": "api", "method": "delete", "now": T0, "args": {"user": "u1", "id": "id-1"}})
        stdout = io.BytesIO()
        cd.serve(api=API, stdin=stdin, stdout=stdout, stderr=io.StringIO())
        out = sent(stdout)
        self.assertEqual(out[1], {"type": "call", "method": "ids.new_id", "args": {}})
        self.assertEqual(out[2], {"type": "done", "value": {"id": "id-1", "owner_user_id": "u1", "name": "dev", "created_at": T0}})
        self.assertEqual(out[3]["error"]["status"], 409)
        self.assertEqual(out[3]["error"]["name"], "api")

    def test_protocol_errors(self) -> None:
        with self.assertRaises(cd.ProtocolError):
            cd.serve(coordinator=Leader, stdin=io.BytesIO(b"not json\n"), stdout=io.BytesIO(), stderr=io.StringIO())
        with self.assertRaises(cd.ProtocolError):
            cd.serve(api=Leader, stdin=lines(HELLO), stdout=io.BytesIO(), stderr=io.StringIO())
        with self.assertRaises(cd.ProtocolError):
            cd.serve(coordinator=Leader, stdin=lines(HELLO, {"type": "step", "now": T0}, {"type": "step", "now": T0}),
                     stdout=io.BytesIO(), stderr=io.StringIO())
        # The end of input before the hello is a clean end.
        cd.serve(coordinator=Leader, stdin=io.BytesIO(), stdout=io.BytesIO(), stderr=io.StringIO())


HELLO2 = {**HELLO, "protocol": 2}
HELLO3 = {**HELLO, "protocol": 3}


class Watcher:
    """Leads from its first step; then waits on its listener, or on the
    lock while it stands by."""

    def __init__(self, ports: cd.Ports) -> None:
        self.p = ports
        self.lease = None
        self.listener = None
        self.seen: list = []

    def is_leader(self) -> bool:
        return self.lease is not None

    def step(self) -> int:
        if self.lease is None:
            self.lease = self.p.try_acquire(self.p.instance)
            if self.lease is None:
                return self.p.now + cd.NS
            self.listener = self.p.listen()
        self.seen += self.listener.poll()
        return self.p.now + 30 * cd.NS

    def quiet(self):
        if self.lease is None:
            return cd.Quiet(every=cd.NS, calls=[cd.Acquire(self.p.instance)])
        return cd.Quiet(every=2 * cd.NS, calls=[self.listener], until=self.p.now + 30 * cd.NS)


class VersionTwoTest(unittest.TestCase):
    def serve(self, *msgs: dict, build=Watcher, **kw) -> list:
        stdout = io.BytesIO()
        cd.serve(coordinator=build, stdin=lines(*msgs), stdout=stdout, stderr=io.StringIO(), **kw)
        return sent(stdout)

    def test_the_lower_version_is_spoken(self) -> None:
        self.assertEqual(self.serve(HELLO2)[0]["protocol"], 2)
        self.assertEqual(self.serve(HELLO)[0]["protocol"], 1)
        self.assertEqual(self.serve(HELLO2, protocol=1)[0]["protocol"], 1)
        self.assertEqual(self.serve(HELLO3)[0]["protocol"], 3)
        self.assertEqual(self.serve(HELLO3, protocol=2)[0]["protocol"], 2)
        self.assertEqual(self.serve({**HELLO, "protocol": 4})[0]["protocol"], 3)

    def test_a_done_declares_the_wake_up_and_a_step_brings_its_answers(self) -> None:
        t1 = "2026-01-05T00:00:01Z"
        out = self.serve(HELLO2,
                         {"type": "step", "now": T0},
                         {"type": "ok", "value": {"ok": False}},
                         # Woken: the lock acquired by the harness's call.
                         {"type": "step", "now": t1, "answers": [{"type": "ok", "value": {"ok": True, "lease": 1, "epoch": 4}}]},
                         {"type": "ok", "value": {"listener": 2}},
                         {"type": "ok", "value": []})
        self.assertEqual(out[1], {"type": "call", "method": "leadership.try_acquire", "args": {"holder": "coord-1"}, "leader": False})
        self.assertEqual(out[2], {"type": "done", "next": t1, "leader": False,
                                  "wake": {"calls": [{"method": "leadership.try_acquire", "args": {"holder": "coord-1"}}], "every_ns": cd.NS}})
        # The try_acquire was answered from the step: the first call sent is
        # the listen, with the leader flag that changed.
        self.assertEqual(out[3], {"type": "call", "method": "feed.listen", "args": {}, "leader": True})
        self.assertEqual(out[4], {"type": "call", "method": "listener.poll", "args": {"listener": 2}})
        self.assertEqual(out[5], {"type": "done", "next": "2026-01-05T00:00:31Z", "leader": True,
                                  "wake": {"calls": [{"method": "listener.poll", "args": {"listener": 2}}], "every_ns": 2 * cd.NS,
                                           "until": "2026-01-05T00:00:31Z"}})

    def test_a_step_that_does_not_make_its_declared_calls_is_a_protocol_error(self) -> None:
        class Forgets(Watcher):
            def step(self) -> int:
                if self.seen:
                    return self.p.now + cd.NS  # woken, but makes no call
                self.seen.append(1)
                return self.p.now + cd.NS

            def quiet(self):
                return cd.Quiet(every=cd.NS, calls=[cd.Acquire("coord-1")])

        with self.assertRaisesRegex(cd.ProtocolError, "did not make the calls its wake-up declared"):
            self.serve(HELLO2, {"type": "step", "now": T0},
                       {"type": "step", "now": T0, "answers": [{"type": "ok", "value": {"ok": True, "lease": 1, "epoch": 1}}]},
                       build=Forgets)
        with self.assertRaisesRegex(cd.ProtocolError, "began with store.get"):
            class Other(Forgets):
                def step(self) -> int:
                    if self.seen:
                        self.p.store_get("w1")
                    self.seen.append(1)
                    return self.p.now + cd.NS
            self.serve(HELLO2, {"type": "step", "now": T0},
                       {"type": "step", "now": T0, "answers": [{"type": "ok", "value": {"ok": False}}]},
                       build=Other)

    def test_a_batch_is_one_message_answered_in_order(self) -> None:
        class Batcher(Leader):
            def step(self) -> int:
                with self.p.batch() as b:
                    rows, vols, gone = b.store_list("active"), b.storage_list_volumes(), b.store_get("nope")
                self.seen = [rows.result(), vols.result()]
                with self.assertRaises(cd.NotFound):
                    gone.result()
                return self.p.now + cd.NS

            def assertRaises(self, cls):
                return unittest.TestCase().assertRaises(cls)

        made: list = []

        def build(p: cd.Ports) -> Batcher:
            made.append(Batcher(p))
            return made[-1]

        for hello, batched in ((HELLO2, True), (HELLO, False)):
            made.clear()
            answers = [{"type": "ok", "value": [{"id": "w1", "created_at": T0}]},
                       {"type": "ok", "value": ["w2", "w1"]},
                       {"type": "error", "error": {"name": "not_found", "text": "no row nope"}}]
            replies = [{"type": "answers", "answers": answers}] if batched else answers
            out = self.serve(hello, {"type": "step", "now": T0}, *replies, build=build)
            if batched:
                self.assertEqual(out[1], {"type": "batch", "leader": False, "calls": [
                    {"method": "store.list", "args": {"filter": "active"}},
                    {"method": "storage.list_volumes", "args": {}},
                    {"method": "store.get", "args": {"id": "nope"}}]})
            else:
                self.assertEqual([m["type"] for m in out[1:4]], ["call"] * 3, "version 1: one call at a time")
            self.assertEqual(made[0].seen, [[{"id": "w1", "created_at": T0_NS}], ["w2", "w1"]],
                             "rows converted; volumes a list, in the harness's order")



def whole_row(id: str, **columns) -> dict:
    """A row as the harness writes it whole: every column."""
    row = {"id": id, "owner_user_id": "u1", "name": "dev", "description": None, "memo": None,
           "image_ref": "img", "instance_backend": "local-docker", "storage_backend": "docker-volume",
           "home_store_key": f"ws-{id}-home", "home_ctx": {"restore_marker": "k1"}, "observed_status": "STANDBY",
           "health_status": "OK", "observed_at": T0, "operation": "NONE", "op_started_at": None, "op_id": None,
           "archive_key": None, "error_count": 0,
           "error_info": {"reason": "Timeout", "message": "m", "is_terminal": False, "operation": "STARTING",
                          "error_count": 1, "context": {"a": [1, {"b": 2}]}, "occurred_at": T0},
           "error_message": None, "previous_status": None, "desired_state": "STANDBY", "deleted_at": None,
           "standby_ttl_seconds": 300, "archive_ttl_seconds": 86400, "last_access_at": T0, "created_at": T0,
           "updated_at": T0}
    row.update(columns)
    return row


class Lister:
    """Lists the rows at every step, changing what it was given (its own)."""

    def __init__(self, ports: cd.Ports) -> None:
        self.p = ports
        self.lists: list = []

    def is_leader(self) -> bool:
        return False

    def step(self) -> int:
        rows = self.p.store_list("all")
        self.lists.append(copy.deepcopy(rows))
        for r in rows:  # the caller's own: nothing here reaches the next listing
            r["name"] = "changed"
            if r["home_ctx"]:
                r["home_ctx"]["restore_marker"] = "changed"
            if r["error_info"]:
                ctx = r["error_info"]["context"]
                ctx["mine"] = True
                if "a" in ctx:
                    ctx["a"][1]["b"] = "changed"
        return self.p.now + cd.NS


class RowChangesTest(unittest.TestCase):
    """Version 3: a row the harness sent before comes as its changes."""

    def lists(self, hello: dict, *answers: list) -> list:
        made: list = []

        def build(ports: cd.Ports) -> Lister:
            made.append(Lister(ports))
            return made[-1]

        msgs = [hello]
        for a in answers:
            msgs += [{"type": "step", "now": T0}, {"type": "ok", "value": a}]
        cd.serve(coordinator=build, stdin=lines(*msgs), stdout=io.BytesIO(), stderr=io.StringIO())
        return made[0].lists

    def test_changes_merge_into_the_row_held(self) -> None:
        t1 = "2026-01-05T00:00:01Z"
        got = self.lists(HELLO3,
                         [whole_row("a"), whole_row("b")],
                         [{"id": "a", "observed_at": t1, "home_ctx": None}, {"id": "b"}],
                         [{"id": "a", "error_info": None}, whole_row("c")])
        self.assertEqual([r["id"] for r in got[1]], ["a", "b"])
        first_a, second_a, third_a = got[0][0], got[1][0], got[2][0]
        self.assertEqual(second_a["observed_at"], T0_NS + cd.NS)
        self.assertIsNone(second_a["home_ctx"])
        self.assertEqual(second_a["name"], "dev", "the caller's change did not reach the row held")
        self.assertEqual(got[1][1], got[0][1], "an unchanged row is the last version")
        self.assertEqual(got[1][1]["error_info"]["context"], {"a": [1, {"b": 2}]})
        self.assertEqual(third_a, dict(second_a, error_info=None))
        self.assertEqual(got[2][1], dict(whole_row("c"), **{c: T0_NS for c in ("observed_at", "last_access_at", "created_at", "updated_at")},
                                         error_info=dict(whole_row("c")["error_info"], occurred_at=T0_NS)))
        for c in first_a:
            if c not in ("observed_at", "home_ctx"):
                self.assertEqual(second_a[c], first_a[c], c)

    def test_version_two_rows_are_whole_and_not_held(self) -> None:
        got = self.lists(HELLO2, [whole_row("a")], [whole_row("a", name="other")])
        self.assertEqual(got[1][0]["name"], "other")

    def test_an_empty_context_is_the_callers_own_too(self) -> None:
        row = whole_row("a")
        row["error_info"] = dict(row["error_info"], context={})
        got = self.lists(HELLO3, [row], [{"id": "a"}])
        self.assertEqual(got[1][0]["error_info"]["context"], {})

    def test_changes_of_a_row_not_held_are_a_protocol_error(self) -> None:
        with self.assertRaisesRegex(cd.ProtocolError, "row a: no owner_user_id, and no last version to take it from"):
            self.lists(HELLO3, [{"id": "a", "name": "n"}])

    def test_every_answer_merges_in_the_order_sent(self) -> None:
        """The second listing of a batch is changes of the first, whose
        result is never read; a store.get's answer is changes too."""
        made: list = []

        def build(ports: cd.Ports) -> BatchLister:
            made.append(BatchLister(ports))
            return made[-1]

        t1 = "2026-01-05T00:00:01Z"
        msgs = [HELLO3, {"type": "step", "now": T0},
                {"type": "answers", "answers": [{"type": "ok", "value": [whole_row("a")]},
                                                {"type": "ok", "value": [{"id": "a", "name": "n2"}]}]},
                {"type": "ok", "value": {"id": "a", "observed_at": t1}}]
        cd.serve(coordinator=build, stdin=lines(*msgs), stdout=io.BytesIO(), stderr=io.StringIO())
        second, got = made[0].got
        self.assertEqual((second[0]["name"], second[0]["owner_user_id"]), ("n2", "u1"))
        self.assertEqual((got["name"], got["observed_at"]), ("n2", T0_NS + cd.NS))


class BatchLister:
    """Lists twice in a batch, reading only the second, then gets a row."""

    def __init__(self, ports: cd.Ports) -> None:
        self.p = ports
        self.got: list = []

    def is_leader(self) -> bool:
        return False

    def step(self) -> int:
        with self.p.batch() as b:
            _, second = b.store_list("all"), b.store_list("all")
        self.got += [second.result(), self.p.store_get("a")]
        return self.p.now + cd.NS


if __name__ == "__main__":
    unittest.main()
