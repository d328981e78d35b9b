"""The Python client of converge's driver protocol, versions 1 to 3.

A coordinator or API written in Python runs as a child process of the
converge simulator: it gets its clock, its ticks and the answer to every
port call over standard input and output (newline-delimited JSON), so the
simulator can judge it exactly as it judges an implementation in Go. See
docs/driver-protocol.md in the converge repository for the protocol.

Standard library only; one module. Use::

    import converge_driver as cd

    class MyCoordinator:
        def __init__(self, ports: cd.Ports) -> None: ...
        def step(self) -> int: ...            # next wake time, ns since the epoch
        def is_leader(self) -> bool: ...
        def close(self) -> None: ...          # optional
        def quiet(self) -> cd.Quiet | None: ...  # optional: what wakes it (version 2 on)

    class MyAPI:
        def __init__(self, ports: cd.Ports) -> None: ...
        def create(self, user: str, request: dict) -> dict: ...   # the row
        def get(self, user: str, id: str) -> dict: ...
        def list(self, user: str) -> list[dict]: ...
        def patch(self, user: str, id: str, request: dict) -> dict: ...
        def delete(self, user: str, id: str) -> None: ...
        def recover(self, admin: str, id: str) -> None: ...
        def wake(self, id: str) -> None: ...

    cd.serve(coordinator=MyCoordinator, api=MyAPI, name="my-system")

Times are integers: nanoseconds since the Unix epoch (None for null). Rows
are dicts keyed by the column names of the workspaces table; their time
columns are such integers; each row a port returns is the caller's own,
its objects too. A port that fails raises a PortError subclass
(NotFound, Fenced, NotLeader, Unavailable, ProviderError, ...). An API
method rejects a request by raising APIError. The child must read no
clock, draw no randomness and do no I/O but through its Ports: ids come
from Ports.new_id.
"""

from __future__ import annotations

import sys

# Type names for the annotations only (postponed: never evaluated), so that
# a child does not pay for importing typing at every start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO, Callable, Optional, TextIO

#: The highest protocol version this client speaks; it speaks the lower of
#: this and the harness's.
PROTOCOL = 3

#: What a child writes to standard error before each message that ends an
#: exchange, so the harness knows which exchange the text before it
#: belongs to.
STDERR_MARKER = "\x1e\n"

NS = 1_000_000_000

# ---- time -----------------------------------------------------------------

# Times are converted with integer arithmetic (the proleptic Gregorian
# calendar, as RFC 3339 and Go use): exact to the nanosecond, which
# datetime is not. The module imports neither re nor json (see _json
# below): a child starts at every coordinator restart, and those imports
# cost more than the rest of a start.
_DIGITS = frozenset("0123456789")


def _days(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to y-m-d."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _civil(z: int) -> tuple:
    """The (year, month, day) z days after 1970-01-01."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


#: Parsed times by their text: a listing brings the same times again and
#: again (created_at, last_access_at, ...).
_TIMES: dict = {}


def parse_time(s: Optional[str]) -> Optional[int]:
    """An RFC 3339 time ("2026-01-05T00:00:01.5Z") as ns since the epoch."""
    if s is None:
        return None
    if not isinstance(s, str):
        raise ProtocolError(f"time {s!r}: want RFC 3339 such as 2026-01-05T00:00:01.5Z")
    v = _TIMES.get(s)
    if v is None:
        v = _parse_time(s)
        if len(_TIMES) >= 1 << 16:
            _TIMES.clear()
        _TIMES[s] = v
    return v


def _parse_time(s: str) -> int:
    bad = ProtocolError(f"time {s!r}: want RFC 3339 such as 2026-01-05T00:00:01.5Z")
    # [-]YYYY(YY…)-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)
    t = s.find("T") if "T" in s else s.find("t")
    date, rest = s[:t], s[t + 1:]
    neg = date.startswith("-")
    parts = (date[1:] if neg else date).split("-")
    if t < 0 or len(parts) != 3 or len(parts[0]) < 4 or len(parts[1]) != 2 or len(parts[2]) != 2 or len(rest) < 9:
        raise bad
    clock, zone = rest[:8], rest[8:]
    frac = ""
    if zone.startswith("."):
        i = 1
        while i < len(zone) and zone[i] in _DIGITS:
            i += 1
        frac, zone = zone[1:i], zone[i:]
        if not 1 <= len(frac) <= 9:
            raise bad
    off = 0
    if zone in ("Z", "z"):
        pass
    elif len(zone) == 6 and zone[0] in "+-" and zone[3] == ":" and set(zone[1:3] + zone[4:]) <= _DIGITS:
        off = int(zone[1:3]) * 3600 + int(zone[4:]) * 60
        if zone[0] == "-":
            off = -off
    else:
        raise bad
    if clock[2] != ":" or clock[5] != ":" or not set(clock[:2] + clock[3:5] + clock[6:] + "".join(parts)) <= _DIGITS:
        raise bad
    y, mo, d = int(parts[0]), int(parts[1]), int(parts[2])
    hh, mi, ss = int(clock[:2]), int(clock[3:5]), int(clock[6:])
    if neg:
        y = -y
    if not (1 <= mo <= 12 and 1 <= d <= 31 and hh < 24 and mi < 60 and ss < 61):
        raise ProtocolError(f"time {s!r}: a field is out of range")
    secs = _days(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss - off
    return secs * NS + (int(frac.ljust(9, "0")) if frac else 0)


def format_time(ns: Optional[int]) -> Optional[str]:
    """ns since the epoch as RFC 3339 in UTC, with as many fractional digits
    as it needs (as Go's time.RFC3339Nano)."""
    if ns is None:
        return None
    secs, frac = divmod(ns, NS)
    days, rest = divmod(secs, 86400)
    y, mo, d = _civil(days)
    out = f"{y:04d}-{mo:02d}-{d:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"
    if frac:
        out += "." + f"{frac:09d}".rstrip("0")
    return out + "Z"


#: A row's columns, in the order the harness writes them.
_COLUMNS = ("id", "owner_user_id", "name", "description", "memo", "image_ref", "instance_backend", "storage_backend",
            "home_store_key", "home_ctx", "observed_status", "health_status", "observed_at", "operation",
            "op_started_at", "op_id", "archive_key", "error_count", "error_info", "error_message", "previous_status",
            "desired_state", "deleted_at", "standby_ttl_seconds", "archive_ttl_seconds", "last_access_at",
            "created_at", "updated_at")

#: Row columns that hold times.
TIME_COLUMNS = ("observed_at", "op_started_at", "deleted_at", "last_access_at", "created_at", "updated_at")


def _row_in(row: dict) -> dict:
    known = _TIMES.get
    for c in TIME_COLUMNS:
        v = row.get(c)
        if v is not None:
            t = known(v) if isinstance(v, str) else None
            row[c] = t if t is not None else parse_time(v)
    ei = row.get("error_info")
    if ei is not None and ei.get("occurred_at") is not None:
        ei["occurred_at"] = parse_time(ei["occurred_at"])
    return row


def _own(row: dict) -> dict:
    """A copy of a held row for the caller, its objects copied too
    (home_ctx holds only text; error_info's context any JSON)."""
    out = dict(row)
    hc, ei = out.get("home_ctx"), out.get("error_info")
    if hc is not None:
        out["home_ctx"] = dict(hc)
    if ei is not None:
        out["error_info"] = ei = dict(ei)
        if ei.get("context") is not None:
            ei["context"] = _copy(ei["context"])
    return out


def _copy(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def _times_out(d: dict) -> dict:
    """A copy of a row or patch with its integer times as wire strings."""
    out = dict(d)
    for c in TIME_COLUMNS:
        if c in out and out[c] is not None:
            out[c] = format_time(out[c])
    ei = out.get("error_info")
    if ei is not None and ei.get("occurred_at") is not None:
        ei = dict(ei)
        ei["occurred_at"] = format_time(ei["occurred_at"])
        out["error_info"] = ei
    return out


# ---- errors -----------------------------------------------------------------


class ProtocolError(Exception):
    """The harness broke the protocol (or this process did)."""


class PortError(Exception):
    """A port call failed. name is the protocol's stable error name; text
    is the error's exact message."""

    name = "error"

    def __init__(self, text: str, **details: Any) -> None:
        super().__init__(text)
        self.text = text
        self.details = details

    def to_wire(self) -> dict:
        d: dict = {"name": self.name, "text": self.text}
        d.update({k: v for k, v in self.details.items() if v is not None})
        return d


class NotFound(PortError):
    name = "not_found"


class Fenced(PortError):
    name = "fenced"


class NotLeader(PortError):
    name = "not_leader"


class Crashed(PortError):
    """The simulator crashed this process. Raised from step, it reports the
    instance dead."""

    name = "crashed"


class Unavailable(PortError):
    name = "unavailable"


class ProviderError(PortError):
    """A provider call failed with a SPEC 1.5 error code (self.code)."""

    name = "provider"

    def __init__(self, text: str, code: str, message: str = "", context: Optional[dict] = None) -> None:
        super().__init__(text, code=code, message=message, context=context)
        self.code = code
        self.message = message
        self.context = context or {}


class InvalidInput(PortError):
    """A value the store cannot hold (a NUL character, invalid UTF-8, too
    many characters): nothing was written."""

    name = "invalid_input"


class LimitExceeded(PortError):
    """A guarded store write the running limits refused (SPEC 4.3): limit
    holds limit_type, current, max and running_workspaces."""

    name = "limit_exceeded"

    def __init__(self, text: str, limit: dict) -> None:
        super().__init__(text, limit=limit)
        self.limit = limit


class APIError(PortError):
    """An API call's rejection: an HTTP status and an error code (SPEC 4.3)."""

    name = "api"

    def __init__(self, status: int, code: str, message: str, limit: Optional[dict] = None) -> None:
        super().__init__(f"{code}: {message}", status=status, code=code, message=message, limit=limit)
        self.status = status
        self.code = code
        self.message = message
        self.limit = limit


_ERRORS: dict = {c.name: c for c in (NotFound, Fenced, NotLeader, Crashed, Unavailable, InvalidInput)}


def error_from_wire(e: dict) -> PortError:
    """The exception a wire error stands for."""
    name = e.get("name")
    text = e.get("text", "")
    if name == "provider":
        return ProviderError(text, e.get("code", ""), e.get("message", ""), e.get("context"))
    if name == "api":
        return APIError(e.get("status", 500), e.get("code", ""), e.get("message", ""), e.get("limit"))
    if name == "limit_exceeded":
        return LimitExceeded(text, e.get("limit") or {})
    if name in _ERRORS:
        return _ERRORS[name](text)
    if name == "error":
        return PortError(text)
    raise ProtocolError(f"unknown error name {name!r}")


# ---- the connection -------------------------------------------------------------

def _codec() -> tuple:
    """JSON's decode and encode: CPython's accelerator _json, used directly
    (importing json would import re, enum and more: a large part of a
    child's start), or json where _json is missing or behaves otherwise."""
    try:
        import _json

        class _Context:
            strict = True
            object_hook = None
            object_pairs_hook = None
            parse_float = float
            parse_int = int
            memo: dict = {}

            @staticmethod
            def parse_constant(name: str) -> Any:
                raise ValueError(f"{name} is not JSON")

        scan = _json.make_scanner(_Context())

        def loads(s: Any) -> Any:
            if isinstance(s, bytes):
                s = s.decode()
            i, n = 0, len(s)
            while i < n and s[i] in " \t\r\n":
                i += 1
            try:
                v, end = scan(s, i)
            except StopIteration:
                raise ValueError(f"expecting a value at {i}") from None
            while end < n and s[end] in " \t\r\n":
                end += 1
            if end != n:
                raise ValueError(f"extra data at {end}")
            return v

        def default(o: Any) -> Any:
            raise TypeError(f"{type(o).__name__} is not JSON")

        make = _json.make_encoder(None, default, _json.encode_basestring, None, ":", ",", False, False, False)

        def dumps(o: Any) -> str:
            return "".join(make(o, 0))

        sample = {"a": [1, 2.5, "ü\n\"", None, True, {"b": -3}]}
        if loads(dumps(sample)) != sample or dumps(sample) != '{"a":[1,2.5,"ü\\n\\"",null,true,{"b":-3}]}':
            raise ImportError("_json behaves otherwise")
        return loads, dumps
    except (ImportError, AttributeError, TypeError, ValueError):
        import json

        return json.loads, json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


_loads, _encode = _codec()


def encode_json(value: Any, sort_keys: bool = False) -> str:
    """value as compact JSON (no white space, non-ASCII kept), with its
    object keys sorted when sort_keys: e.g. a change's payload for
    workspace:{id}."""
    if sort_keys:
        value = _sorted(value)
    return _encode(value)


def _sorted(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _sorted(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_sorted(x) for x in v]
    return v


class _Conn:
    def __init__(self, rd: BinaryIO, wr: BinaryIO, err: TextIO) -> None:
        self.rd = rd
        self.wr = wr
        self.err = err
        self.is_leader: Optional[Callable[[], bool]] = None
        self.sent_leader: Optional[bool] = None
        self.version = PROTOCOL
        # During a step that brings answers: the wake-up's calls the
        # harness made ([(method, encoded args)]) and their answers.
        self.woken: list = []
        self.answers: list = []
        # The last version of each row the harness sent, by id: under
        # version 3 it sends a row it sent before as its changes (section 3).
        self.held: dict = {}

    def row_in(self, r: dict) -> dict:
        """A row of an answer, as the caller's own: whole, or (version 3)
        its id and the columns that changed since the last version held."""
        if self.version < 3:
            return _row_in(r)
        prev = self.held.get(r["id"])
        if prev is None:
            if len(r) < len(_COLUMNS):
                missing = [c for c in _COLUMNS if c not in r]
                raise ProtocolError(f"row {r['id']}: no {missing[0]}, and no last version to take it from")
            row = _row_in(r)
        elif len(r) == 1:
            row = prev
        else:
            row = dict(prev)
            row.update(_row_in(r))
        self.held[row["id"]] = row
        return _own(row)

    def rows_in(self, rows: list) -> list:
        return [self.row_in(r) for r in rows]

    def read(self) -> Optional[dict]:
        line = self.rd.readline()
        if not line:
            return None
        try:
            m = _loads(line)
        except ValueError as e:
            raise ProtocolError(f"not JSON from the harness: {line[:200]!r}: {e}") from None
        if not isinstance(m, dict) or "type" not in m:
            raise ProtocolError(f"not a protocol message: {line[:200]!r}")
        return m

    def send(self, m: dict) -> None:
        self.wr.write((_encode(m) + "\n").encode())
        self.wr.flush()

    def leader_field(self, m: dict, always: bool) -> dict:
        if self.is_leader is not None:
            lead = bool(self.is_leader())
            if always or lead != self.sent_leader:
                m["leader"] = lead
                self.sent_leader = lead
        return m

    def leader_suffix(self) -> str:
        """The leader flag to send with the next call, when it changed."""
        if self.is_leader is not None:
            lead = bool(self.is_leader())
            if lead != self.sent_leader:
                self.sent_leader = lead
                return ',"leader":true' if lead else ',"leader":false'
        return ""

    def call(self, method: str, args: dict) -> Any:
        encoded = _encode(args)
        if self.answers:
            want_method, want_args = self.woken.pop(0)
            if (method, encoded) != (want_method, want_args):
                raise ProtocolError(f"the step began with {method} {encoded}, not with the call {want_method} {want_args} "
                                    "its wake-up declared and the harness made")
            return _answer(method, self.answers.pop(0))
        line = '{"type":"call","method":"' + method + '","args":' + encoded + self.leader_suffix()
        self.wr.write((line + "}\n").encode())
        self.wr.flush()
        return _answer(method, self.read())

    def batch(self, calls: list) -> list:
        """Sends calls ([(method, args)]) in one message (version 2) and
        returns their answers, in order: each the value, or the PortError."""
        if self.version < 2:
            out = []
            for method, args in calls:
                try:
                    out.append(self.call(method, args))
                except PortError as e:
                    out.append(e)
            return out
        if self.answers:
            raise ProtocolError("a batch where the step's first calls are still to be made: make the calls of the wake-up first")
        body = ",".join('{"method":"' + m + '","args":' + _encode(a) + "}" for m, a in calls)
        self.wr.write(('{"type":"batch","calls":[' + body + "]" + self.leader_suffix() + "}\n").encode())
        self.wr.flush()
        m = self.read()
        if m is None or m.get("type") != "answers" or len(m.get("answers") or []) != len(calls):
            raise ProtocolError(f"a batch of {len(calls)} calls answered by {m!r:.200}")
        out = []
        for (method, _), a in zip(calls, m["answers"]):
            try:
                out.append(_answer(method, a))
            except PortError as e:
                out.append(e)
        return out

    def take_answers(self, answers: Optional[list], declared: list) -> None:
        """The answers a step brings to the first calls of the wake-up
        declared before it."""
        self.woken, self.answers = [], []
        if not answers:
            return
        if len(answers) > len(declared):
            raise ProtocolError(f"a step with {len(answers)} answers to a wake-up of {len(declared)} calls")
        self.woken, self.answers = list(declared[:len(answers)]), list(answers)

    def terminal(self, m: dict) -> None:
        # After whatever the process wrote to standard error, in one write.
        self.err.write(STDERR_MARKER)
        self.err.flush()
        self.send(m)


def _answer(method: str, m: Optional[dict]) -> Any:
    """The value of an answer to a call of method, or its error raised."""
    if m is None:
        raise ProtocolError(f"{method}: the harness closed the connection")
    t = m.get("type")
    if t == "ok":
        return m.get("value")
    if t == "error":
        raise error_from_wire(m.get("error") or {})
    raise ProtocolError(f"{method}: a {t!r} message where an answer was due")


# ---- ports ----------------------------------------------------------------


class Lease:
    """A held leader lock: epoch is its fencing epoch."""

    def __init__(self, conn: _Conn, handle: int, epoch: int) -> None:
        self._c, self._h, self.epoch = conn, handle, epoch

    def check(self) -> None:
        """Raises NotLeader once the lock is lost."""
        self._c.call("lease.check", {"lease": self._h})

    def release(self) -> None:
        self._c.call("lease.release", {"lease": self._h})

    def _wake(self) -> tuple:
        return ("lease.check", {"lease": self._h})


class Listener:
    """A change-feed listener: poll() returns the change notifications
    (dicts; "at" in ns) since the last poll, in the order of their commits,
    or raises once the session is lost (listen again)."""

    def __init__(self, conn: _Conn, handle: int) -> None:
        self._c, self._h = conn, handle

    def poll(self) -> list:
        changes = self._c.call("listener.poll", {"listener": self._h}) or []
        for ch in changes:
            ch["at"] = parse_time(ch.get("at"))
        return changes

    def close(self) -> None:
        self._c.call("listener.close", {"listener": self._h})

    def _wake(self) -> tuple:
        return ("listener.poll", {"listener": self._h})


class Subscription:
    """A bus subscription: poll() returns [(channel, payload)] received since
    the last poll, oldest first (nothing when the call fails)."""

    def __init__(self, conn: _Conn, handle: int) -> None:
        self._c, self._h = conn, handle

    def poll(self) -> list:
        try:
            msgs = self._c.call("subscription.poll", {"subscription": self._h}) or []
        except PortError:
            return []
        return [(m["channel"], m["payload"]) for m in msgs]

    def close(self) -> None:
        self._c.call("subscription.close", {"subscription": self._h})

    def _wake(self) -> tuple:
        return ("subscription.poll", {"subscription": self._h})


class Acquire:
    """A quiet step's try of the leader lock for holder (Quiet.calls)."""

    def __init__(self, holder: str) -> None:
        self.holder = holder

    def _wake(self) -> tuple:
        return ("leadership.try_acquire", {"holder": self.holder})


class Quiet:
    """What a coordinator's quiet() returns (protocol version 2): until
    until (ns; None: no limit), a step at time t makes calls, in order, and
    when each answers quietly it changes nothing and wants to run again at
    t + every (or at until, if sooner). calls are a Lease (check; quiet:
    still held), a Listener (poll; quiet: no change), a Subscription (poll;
    quiet: no message) and Acquire(holder) (try the lock; quiet: another
    holds it). The harness takes those steps itself and steps the
    coordinator only when a call answers otherwise (then its step's first
    calls are answered from what the harness got) or until comes."""

    def __init__(self, every: int, calls: list, until: Optional[int] = None) -> None:
        if every <= 0 or not calls:
            raise ValueError("Quiet: want every > 0 and at least one call")
        self.every, self.calls, self.until = every, list(calls), until

    def to_wire(self) -> tuple:
        """The done's wake member, and the calls as the client compares
        them ([(method, encoded args)])."""
        calls = [c._wake() for c in self.calls]
        w: dict = {"calls": [{"method": m, "args": a} for m, a in calls], "every_ns": self.every}
        if self.until is not None:
            w["until"] = format_time(self.until)
        return w, [(m, _encode(a)) for m, a in calls]


class Future:
    """The result of a call in a batch: result() returns its value or
    raises its PortError, once the batch was sent."""

    def __init__(self, convert: Optional[Callable[[Any], Any]]) -> None:
        self._convert = convert
        self._done = False
        self._value: Any = None
        self._error: Optional[PortError] = None

    def _set(self, answer: Any) -> None:
        self._done = True
        if isinstance(answer, PortError):
            self._error = answer
        else:
            self._value = self._convert(answer) if self._convert else answer

    def result(self) -> Any:
        if not self._done:
            raise ProtocolError("the batch of this call has not been sent yet")
        if self._error is not None:
            raise self._error
        return self._value


class Ports:
    """The ports of this process. Each method is one port call the
    simulator answers (and may fail: crash, outage, lost response); now is
    the virtual time of the exchange in progress.

    Ordered results: store_list (by id), instances_list (a dict in
    workspace-id order), storage_list_volumes (ascending ids), objects_list
    (by key), Listener.poll (in commit order), Subscription.poll (oldest
    first)."""

    def __init__(self, conn: _Conn, instance: str, limits: dict) -> None:
        self._c = conn
        self.instance = instance
        self.max_running_per_user: int = limits.get("max_running_per_user", 2)
        self.max_running_global: int = limits.get("max_running_global", 100)
        self.now: int = 0

    def _call(self, method: str, args: dict, convert: Optional[Callable[[Any], Any]] = None) -> Any:
        v = self._c.call(method, args)
        return convert(v) if convert else v

    @property
    def version(self) -> int:
        """The protocol version of the session."""
        return self._c.version

    def batch(self) -> Batch:
        """A batch of calls sent in one message when the with block ends;
        its methods are Ports's (the store, instances, storage, objects, bus
        and ids ones) and return a Future each::

            with ports.batch() as b:
                rows, volumes = b.store_list("active"), b.storage_list_volumes()
            for w in rows.result(): ...

        Every call of a batch is made, in order, whatever the others answer:
        batch only calls that do not depend on each other. Under version 1
        the calls are made one by one."""
        return Batch(self)

    # store
    def store_get(self, id: str) -> dict:
        return self._call("store.get", {"id": id}, self._c.row_in)

    def store_list(self, filter: str = "all") -> list:
        """The rows of a selection, ordered by id. filter: all, active,
        reconcile, ttl or running (docs/driver-protocol.md gives each
        predicate)."""
        return self._call("store.list", {"filter": filter}, self._c.rows_in)

    def store_insert(self, writer: dict, workspace: dict) -> None:
        return self._call("store.insert", {"writer": writer, "workspace": _times_out(workspace)})

    def store_insert_within_limits(self, writer: dict, workspace: dict, limits: dict) -> None:
        """Inserts workspace only if the running limits (max_running_per_user,
        max_running_global) allow one more, atomically with the write; raises
        LimitExceeded otherwise (SPEC 4.3)."""
        return self._call("store.insert_within_limits", {"writer": writer, "workspace": _times_out(workspace), "limits": limits})

    def store_update_within_limits(self, writer: dict, id: str, cond: dict, patch: dict, limits: dict) -> bool:
        """store_update under the running-limit guard; raises LimitExceeded
        when the limits refuse it."""
        return self._call("store.update_within_limits",
                          {"writer": writer, "id": id, "cond": cond, "patch": _times_out(patch), "limits": limits},
                          _applied)

    def store_update(self, writer: dict, id: str, cond: dict, patch: dict) -> bool:
        """Applies patch to row id if cond holds; returns whether it did.
        A writer with an epoch is fenced (Fenced) unless it is current."""
        return self._call("store.update", {"writer": writer, "id": id, "cond": cond, "patch": _times_out(patch)}, _applied)

    def store_update_many(self, writer: dict, updates: list) -> None:
        """updates: [(id, cond, patch)]."""
        rows = [{"id": i, "cond": c, "patch": _times_out(p)} for i, c, p in updates]
        return self._call("store.update_many", {"writer": writer, "updates": rows})

    def store_mark_observed(self, writer: dict, ids: list, at: int) -> None:
        return self._call("store.mark_observed", {"writer": writer, "ids": list(ids), "at": format_time(at)})

    # leadership
    def try_acquire(self, holder: str) -> Optional[Lease]:
        r = self._c.call("leadership.try_acquire", {"holder": holder})
        if not r["ok"]:
            return None
        return Lease(self._c, r["lease"], r["epoch"])

    # change feed
    def listen(self) -> Listener:
        return Listener(self._c, self._c.call("feed.listen", {})["listener"])

    # instances (containers)
    def instances_start(self, id: str, image_ref: str) -> None:
        return self._call("instances.start", {"id": id, "image_ref": image_ref})

    def instances_delete(self, id: str) -> None:
        return self._call("instances.delete", {"id": id})

    def instances_list(self) -> dict:
        """{workspace id: running} for every workspace container, in
        workspace-id order."""
        return self._call("instances.list", {}, lambda xs: {x["workspace_id"]: x["running"] for x in xs})

    # storage (volumes and archives)
    def storage_provision(self, id: str) -> None:
        return self._call("storage.provision", {"id": id})

    def storage_list_volumes(self) -> list:
        """The ids of every workspace with a volume, in ascending order."""
        return self._call("storage.list_volumes", {}, list)

    def storage_archive(self, id: str, op_id: str) -> str:
        return self._call("storage.archive", {"id": id, "op_id": op_id})

    def storage_restore(self, id: str, key: str) -> str:
        return self._call("storage.restore", {"id": id, "key": key})

    def storage_delete_volume(self, id: str) -> None:
        return self._call("storage.delete_volume", {"id": id})

    # objects (the archive bucket)
    def objects_put(self, key: str, data: bytes) -> None:
        import base64

        return self._call("objects.put", {"key": key, "data": base64.b64encode(data).decode()})

    def objects_get(self, key: str) -> bytes:
        import base64

        return self._call("objects.get", {"key": key}, base64.b64decode)

    def objects_head(self, key: str) -> bool:
        return self._call("objects.head", {"key": key}, bool)

    def objects_list(self, prefix: str) -> list:
        """[(key, size)] ordered by key."""
        return self._call("objects.list", {"prefix": prefix}, lambda xs: [(o["key"], o["size"]) for o in xs])

    def objects_delete(self, key: str) -> None:
        return self._call("objects.delete", {"key": key})

    # bus (Redis)
    def bus_publish(self, channel: str, payload: str) -> None:
        return self._call("bus.publish", {"channel": channel, "payload": payload})

    def bus_subscribe(self, *channels: str) -> Subscription:
        return Subscription(self._c, self._c.call("bus.subscribe", {"channels": list(channels)})["subscription"])

    def bus_incr(self, key: str) -> int:
        return self._call("bus.incr", {"key": key}, int)

    def bus_decr(self, key: str) -> int:
        return self._call("bus.decr", {"key": key}, int)

    def bus_get(self, key: str) -> Optional[str]:
        """The value, or None when absent or expired."""
        return self._call("bus.get", {"key": key}, lambda r: r["value"] if r["ok"] else None)

    def bus_set(self, key: str, value: str, ttl_ns: int = 0) -> None:
        return self._call("bus.set", {"key": key, "value": value, "ttl_ns": ttl_ns})

    def bus_set_nx(self, key: str, value: str, ttl_ns: int = 0) -> bool:
        return self._call("bus.set_nx", {"key": key, "value": value, "ttl_ns": ttl_ns}, bool)

    def bus_del(self, *keys: str) -> None:
        return self._call("bus.del", {"keys": list(keys)})

    # ids and notes
    def new_id(self) -> str:
        """A new unique id (a UUID string) from the simulator."""
        return self._call("ids.new_id", {})

    def note(self, text: str) -> None:
        """Leaves a line of text in the run's history."""
        self._c.send({"type": "note", "text": text})


def _applied(r: dict) -> bool:
    return bool(r["applied"])


class Batch(Ports):
    """Calls gathered by Ports.batch(): each method returns a Future; the
    calls go in one message when the with block ends (or at send())."""

    def __init__(self, ports: Ports) -> None:
        super().__init__(ports._c, ports.instance, {"max_running_per_user": ports.max_running_per_user,
                                                    "max_running_global": ports.max_running_global})
        self.now = ports.now
        self._calls: list = []
        self._futures: list = []

    def _call(self, method: str, args: dict, convert: Optional[Callable[[Any], Any]] = None) -> Future:
        f = Future(convert)
        self._calls.append((method, args))
        self._futures.append(f)
        return f

    def try_acquire(self, holder: str) -> Any:
        raise ProtocolError("try_acquire cannot be batched")

    def listen(self) -> Any:
        raise ProtocolError("listen cannot be batched")

    def bus_subscribe(self, *channels: str) -> Any:
        raise ProtocolError("bus_subscribe cannot be batched")

    def batch(self) -> Batch:
        raise ProtocolError("a batch within a batch")

    def send(self) -> None:
        """Sends the calls gathered so far and sets their futures."""
        calls, futures = self._calls, self._futures
        self._calls, self._futures = [], []
        if not calls:
            return
        for f, answer in zip(futures, self._c.batch(calls)):
            f._set(answer)

    def __enter__(self) -> Batch:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if kind is None:
            self.send()


# ---- serving -------------------------------------------------------------------


def _api_call(api: Any, method: str, a: dict) -> Any:
    if method == "create":
        return _times_out(api.create(a["user"], a["create"]))
    if method == "get":
        return _times_out(api.get(a["user"], a["id"]))
    if method == "list":
        return [_times_out(r) for r in api.list(a["user"])]
    if method == "patch":
        return _times_out(api.patch(a["user"], a["id"], a["patch"]))
    if method == "delete":
        return api.delete(a["user"], a["id"])
    if method == "recover":
        return api.recover(a["admin"], a["id"])
    if method == "wake":
        return api.wake(a["id"])
    raise ProtocolError(f"unknown API method {method!r}")


def serve(
    coordinator: Optional[Callable[[Ports], Any]] = None,
    api: Optional[Callable[[Ports], Any]] = None,
    name: str = "python",
    stdin: Optional[BinaryIO] = None,
    stdout: Optional[BinaryIO] = None,
    stderr: Optional[TextIO] = None,
    protocol: int = PROTOCOL,
) -> None:
    """Serves one protocol session until the end of input: builds the
    coordinator or the API the hello asks for (coordinator(ports) or
    api(ports)), then answers step, api and close requests. It speaks the
    lower of protocol (at most PROTOCOL) and the harness's version; from
    version 2 on, a coordinator's quiet() (when it has one) declares after
    each step what wakes it."""
    conn = _Conn(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, stderr or sys.stderr)
    hello = conn.read()
    if hello is None:
        return
    if hello["type"] != "hello":
        raise ProtocolError(f"a {hello['type']!r} message where hello was due")
    offered = hello.get("protocol")
    if not isinstance(offered, int) or offered < 1:
        raise ProtocolError(f"the harness speaks protocol version {offered!r}; this client speaks 1 to {PROTOCOL}")
    conn.version = min(offered, protocol, PROTOCOL)
    ports = Ports(conn, hello.get("instance", ""), hello.get("limits") or {})
    role = hello.get("role")
    if role == "coordinator" and coordinator is not None:
        obj = coordinator(ports)
        conn.is_leader = obj.is_leader
    elif role == "api" and api is not None:
        obj = api(ports)
    else:
        raise ProtocolError(f"this child cannot play the role {role!r}")
    quiet = getattr(obj, "quiet", None) if role == "coordinator" and conn.version >= 2 else None
    declared: list = []
    conn.terminal({"type": "ready", "protocol": conn.version, "name": name, "stderr_sync": True})
    while True:
        m = conn.read()
        if m is None:
            return
        if m.get("now") is None:
            raise ProtocolError(f"a {m['type']!r} request without now")
        ports.now = parse_time(m["now"])
        done: dict = {"type": "done"}
        t = m["type"]
        if m.get("answers") and t != "step":
            raise ProtocolError(f"a {t!r} request with answers")
        conn.take_answers(m.get("answers"), declared)
        declared = []
        try:
            if t == "step" and role == "coordinator":
                done["next"] = format_time(obj.step())
                if conn.answers:
                    raise ProtocolError(f"the step did not make the calls its wake-up declared ({conn.woken[0][0]} first): "
                                        "the harness made them for it")
                q = quiet() if quiet is not None else None
                if q is not None:
                    done["wake"], declared = q.to_wire()
            elif t == "close" and role == "coordinator":
                if hasattr(obj, "close"):
                    obj.close()
            elif t == "api" and role == "api":
                done["value"] = _api_call(obj, m.get("method", ""), m.get("args") or {})
            else:
                raise ProtocolError(f"a {t!r} request this child cannot serve")
        except PortError as e:
            done.pop("next", None)
            done.pop("wake", None)
            declared = []
            done["error"] = e.to_wire()
        if role == "coordinator":
            conn.leader_field(done, True)
        conn.terminal(done)


def main(coordinator: Optional[Callable[[Ports], Any]] = None, api: Optional[Callable[[Ports], Any]] = None, name: str = "python") -> None:
    """serve(), then exit: 0 at the end of input, 1 on a protocol error."""
    try:
        serve(coordinator=coordinator, api=api, name=name)
    except ProtocolError as e:
        print(f"converge_driver: {e}", file=sys.stderr)
        sys.exit(1)
