#!/usr/bin/env python3
"""A workspace coordinator and API in Python, written from converge's spec,
docs/spec/workspaces.md.

It is the driver protocol's example: converge's simulator runs it as child
processes (one per coordinator instance, one per API process) and judges it
with every checker, exactly as it judges the Go reference:

    converge sim --exec "python3 examples/python-coordinator/coordinator.py"

Three deliberately broken variants show the judge catching real bugs:

    --bug no-cas-claim      claims are written without compare-and-set (C4)
    --bug key-after-delete  ARCHIVING deletes the volume before it commits
                            archive_key (C8)
    --bug resume-by-mark    a leader remembers that it invoked a workspace's
                            calls, not for which claim, so an operation
                            claimed after one cut short is never resumed
                            (4.2 step 3; this example once shipped it)

Everything is level-triggered from the rows the store returns; the process
keeps only what SPEC allows it to keep in memory (its leadership, the calls
it invoked since it became leader, the listener it reads).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs every child's start
    from typing import Any, Optional

try:
    import converge_driver as cd
except ImportError:  # run from the repository: the library lives in sim/workspace/driver/python
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sim", "workspace", "driver", "python"))
    import converge_driver as cd

S = cd.NS  # one second in ns
MIN = 60 * S

# Periods (SPEC 3): adaptive 2 s / 5 s / 30 s; TTL 60 s; GC hourly.
PERIOD_BUSY, PERIOD_ACTIVE, PERIOD_IDLE = 2 * S, 5 * S, 30 * S
TTL_PERIOD, GC_PERIOD = 60 * S, 3600 * S
# The EventListener drains the change feed this often (SPEC 4.6: published
# within 2 s); a standby tries to take the lock this often (a failover
# within 5 s, SPEC 7's "a few seconds").
EVENTS_EVERY, ELECTION_RETRY = 2 * S, 5 * S
RETRY_INTERVAL, MAX_ATTEMPTS = 30 * S, 3  # SPEC 4.2.4
ORPHAN_DELAY = 2 * 3600 * S  # SPEC 4.5
TIMEOUTS = {  # SPEC 4.2.3
    "PROVISIONING": 5 * MIN, "STARTING": 5 * MIN, "STOPPING": 5 * MIN,
    "RESTORING": 30 * MIN, "ARCHIVING": 30 * MIN, "DELETING": 10 * MIN,
}
LEVEL = {"PENDING": 0, "STANDBY": 10, "RUNNING": 20}

# SPEC 1.5: provider codes and their reasons.
DATA_LOST = {"ARCHIVE_NOT_FOUND", "META_NOT_FOUND", "CHECKSUM_MISMATCH"}
UNREACHABLE = {"S3_ACCESS_ERROR", "K8S_API_ERROR", "DOCKER_UNREACHABLE"}
TERMINAL_AT_ONCE = {"DISK_FULL", "CONTAINER_CREATE_FAILED", "VOLUME_NOT_FOUND"}

BUGS: set = set()


class StepDown(Exception):
    """Leadership is lost: stop every component at once."""


def archive_key(ws_id: str, op_id: str) -> str:
    return f"archives/{ws_id}/{op_id}/home.tar.zst"


def op_of_key(ws_id: str, key: Optional[str]) -> Optional[str]:
    """The op_id of one of ws_id's archive keys."""
    prefix = f"archives/{ws_id}/"
    if key and key.startswith(prefix) and key.endswith("/home.tar.zst"):
        return key[len(prefix):-len("/home.tar.zst")] or None
    return None


def marker(w: dict) -> Optional[str]:
    return (w.get("home_ctx") or {}).get("restore_marker") or None


def terminal(w: dict) -> bool:
    return bool(w.get("error_info") and w["error_info"].get("is_terminal"))


def in_error(w: dict) -> bool:
    return w["health_status"] == "ERROR" or terminal(w)


def unrestored(w: dict) -> bool:
    """A volume not known to hold the workspace's archive (SPEC 4.2.1)."""
    return bool(w.get("archive_key")) and marker(w) != w["archive_key"]


def completed(w: dict) -> bool:
    """The completion condition of w's operation, observed in the DB (4.2.2)."""
    op, obs = w["operation"], w["observed_status"]
    if op in ("PROVISIONING", "STOPPING"):
        return obs == "STANDBY"
    if op == "RESTORING":
        return obs == "STANDBY" and bool(w.get("archive_key")) and marker(w) == w["archive_key"]
    if op == "STARTING":
        return obs == "RUNNING"
    if op == "ARCHIVING":
        ok_key = bool(w.get("op_id")) and w.get("archive_key") == archive_key(w["id"], w["op_id"])
        return ok_key and (obs == "PENDING" or (obs == "DELETED" and w.get("deleted_at") is not None))
    if op == "DELETING":
        return obs == "DELETED"
    return False


def display(w: dict) -> str:
    """SPEC 1.3: the display state, first matching row wins."""
    if w["observed_status"] == "DELETED":
        return "DELETED"
    if w["health_status"] == "ERROR":
        return "ERROR"
    if w["observed_status"] in ("RUNNING", "STANDBY"):
        return w["observed_status"]
    return "ARCHIVED" if w.get("archive_key") else "PENDING"


def change_of(w: dict, at: int) -> dict:
    """A change notification of row w at time at (SPEC 4.6's payload; at in
    ns): what the feed sends, and what workspace:{id} carries."""
    ch = {"workspace_id": w["id"], "observed_status": w["observed_status"], "health_status": w["health_status"],
          "operation": w["operation"], "desired_state": w["desired_state"], "deleted": w["deleted_at"] is not None,
          "error_count": w["error_count"], "display": display(w), "at": at}
    if w.get("archive_key"):
        ch["archive_key"] = w["archive_key"]
    if w.get("error_message"):
        ch["error_message"] = w["error_message"][:1000]
    return ch


def choose(w: dict) -> Optional[str]:
    """SPEC 4.2.1: the operation that moves w one level toward its target."""
    obs, deleted = w["observed_status"], w.get("deleted_at") is not None
    if deleted:
        if obs == "PENDING" or w["health_status"] == "ERROR":
            return "DELETING"
        return "STOPPING" if obs == "RUNNING" else "ARCHIVING"
    desired = w["desired_state"]
    if obs == "PENDING" and desired != "PENDING":
        return "RESTORING" if w.get("archive_key") else "PROVISIONING"
    if obs == "STANDBY":
        if desired != "PENDING" and unrestored(w):
            return "RESTORING"
        if desired == "RUNNING":
            return "STARTING"
        if desired == "PENDING":
            return "ARCHIVING"
    if obs == "RUNNING" and desired != "RUNNING":
        return "STOPPING"
    return None


def classify(err: cd.PortError) -> tuple:
    """(reason, terminal at once, code) of a failed actuator call (SPEC 1.5)."""
    code = err.code if isinstance(err, cd.ProviderError) else "DOCKER_UNREACHABLE"
    if code in DATA_LOST:
        return "DataLost", True, code
    if code in UNREACHABLE:
        return "Unreachable", False, code
    return "ActionFailed", code in TERMINAL_AT_ONCE, code


class Coordinator:
    """One coordinator instance: leader election, then the five components."""

    def __init__(self, ports: cd.Ports) -> None:
        self.p = ports
        self.lease: Optional[cd.Lease] = None
        self.epoch = 0
        self.listener: Optional[cd.Listener] = None
        self.triggers: Optional[cd.Subscription] = None  # monitor:trigger, while leading
        self.last_event_at: Optional[int] = None
        # workspace id -> (op_started_at of the claim, when this leader last
        # invoked that operation's calls). Keyed by the claim, so a claim whose
        # answer was lost, or a completion cut short, never hides the next
        # operation from its resume (SPEC 4.2 step 3).
        self.invoked: dict = {}
        self.failed: dict = {}  # workspace id -> when an actuator call of this leader last failed
        self.next = {"health": 0, "reconcile": 0, "ttl": 0, "gc": 0}
        self.checked: Optional[int] = None  # when the lease was last checked
        # The listings of the StateReconciler and the TTL Manager, read in
        # the HealthMonitor's write batch (after its writes, so they see
        # them): component -> (now, the answer).
        self.listed: dict = {}

    def is_leader(self) -> bool:
        return self.lease is not None

    def quiet(self) -> Optional[cd.Quiet]:
        """What wakes this instance (protocol version 2): a standby, the lock
        becoming free; a leader, a change on its listener or its next due
        component. The harness makes those calls for it meanwhile (a try of
        the lock every ELECTION_RETRY, a drain of the feed every
        EVENTS_EVERY) and steps it only when one answers something new."""
        if self.lease is None:
            return cd.Quiet(every=ELECTION_RETRY, calls=[cd.Acquire(self.p.instance)])
        if self.listener is None:
            return None  # its next step listens again
        # Each step drains the feed, checks the lock, then takes the
        # triggers (step): a trigger wakes it too.
        calls = [self.listener, self.lease] + ([self.triggers] if self.triggers is not None else [])
        return cd.Quiet(every=EVENTS_EVERY, calls=calls, until=min(self.next.values()))

    def writer(self, component: str, on_behalf: Optional[str] = None) -> dict:
        w = {"component": component, "instance": self.p.instance, "epoch": self.epoch}
        if on_behalf:
            w["on_behalf"] = on_behalf
        return w

    # ---- the loop ----------------------------------------------------------

    def step(self) -> int:
        now = self.p.now
        if self.lease is None:
            try:
                lease = self.p.try_acquire(self.p.instance)
            except cd.PortError:
                lease = None
            if lease is None:
                return now + ELECTION_RETRY
            self.lease, self.epoch, self.invoked, self.failed = lease, lease.epoch, {}, {}
            self.next = dict.fromkeys(self.next, now)
            self.checked = now
        try:
            changes = self.events(now)
            self.check_lease(now)  # at every step (SPEC 3.1)
            if self.take_triggers():
                self.next["health"] = now  # a pass at this step (SPEC 3)
            self.publish_changes(now, changes)
            for name, run in (("health", self.health), ("reconcile", self.reconcile), ("ttl", self.ttl), ("gc", self.gc)):
                if now < self.next[name]:
                    continue
                self.check_lease(now)  # every tick, before it acts (SPEC 3.1)
                try:
                    run(now)
                except (StepDown, cd.Fenced, cd.NotLeader, cd.Crashed):
                    raise
                except cd.PortError:
                    if self.next[name] <= now:  # a failed tick is skipped, and tried again soon
                        self.next[name] = now + PERIOD_BUSY
        except (StepDown, cd.Fenced, cd.NotLeader):
            self.step_down()
            return now + ELECTION_RETRY
        return max(now, min(min(self.next.values()), now + EVENTS_EVERY))

    def step_down(self) -> None:
        lease, listener, triggers = self.lease, self.listener, self.triggers
        self.lease, self.listener, self.triggers, self.epoch, self.invoked, self.failed = None, None, None, 0, {}, {}
        for close in (lease.release if lease else None, listener.close if listener else None,
                      triggers.close if triggers else None):
            if close:
                try:
                    close()
                except cd.PortError:
                    pass

    def close(self) -> None:
        if self.lease is not None:
            self.step_down()

    def check_lease(self, now: Optional[int] = None) -> None:
        """SPEC 3.1: the lock is re-checked before a component acts, before
        each actuator call, and before events are published; a check is
        good for the rest of the step (now), when given."""
        if now is not None and self.checked == now:
            return
        try:
            self.lease.check()
        except cd.PortError as e:
            raise StepDown(str(e)) from None
        if now is not None:
            self.checked = now

    # ---- EventListener (SPEC 4.6) ----------------------------------------------

    def events(self, now: int) -> Optional[list]:
        """Drains the change feed (listening again first, and
        resynchronising, when the listener was lost): the changes."""
        try:
            if self.listener is None:
                self.listener = self.p.listen()
                if self.last_event_at is not None:
                    self.check_lease(now)
                    self.resync()
                else:
                    self.last_event_at = now
            return self.listener.poll()
        except cd.PortError:
            self.listener = None  # lost: re-listen and resynchronise next time
            return None

    def take_triggers(self) -> bool:
        """Whether a monitor:trigger came since the last step (SPEC 3: the
        HealthMonitor then runs a pass at this step). A lost subscription
        is made again; a lost message only delays an observation (C2)."""
        try:
            if self.triggers is None:
                self.triggers = self.p.bus_subscribe("monitor:trigger")
                return False
        except cd.PortError:
            return False
        return bool(self.triggers.poll())

    def publish_changes(self, now: int, changes: Optional[list]) -> None:
        if not changes:
            return
        self.check_lease(now)  # a deposed leader publishes nothing
        with self.p.batch() as b:  # one message for them all; each a hint (C2)
            for ch in changes:
                self.publish(ch["workspace_id"], ch, b)
                self.last_event_at = max(self.last_event_at or 0, ch["at"])

    def resync(self) -> None:
        """Republishes, in one batch, the workspaces changed while the
        listener was away: their state now, at = now (SPEC 4.6)."""
        since, now = self.last_event_at or 0, self.p.now
        changed = [w for w in self.p.store_list("all") if w["updated_at"] is not None and w["updated_at"] >= since]
        with self.p.batch() as b:
            for w in changed:
                self.publish(w["id"], change_of(w, now), b)
                self.last_event_at = max(self.last_event_at or 0, w["updated_at"])

    def publish(self, ws_id: str, change: dict, batch: Optional[cd.Batch] = None) -> None:
        """The change on workspace:{id}, in SPEC 4.6's format (a failed
        publish is ignored: a hint, C2; SSE clients resynchronise through
        GET). In a batch, its answer is not read."""
        payload = dict(change)
        payload["at"] = cd.format_time(change.get("at"))
        text = cd.encode_json(payload, sort_keys=True)
        if batch is not None:
            batch.bus_publish(f"workspace:{ws_id}", text)
            return
        try:
            self.p.bus_publish(f"workspace:{ws_id}", text)
        except cd.PortError:
            pass

    # ---- HealthMonitor (SPEC 4.1) --------------------------------------------------

    def health(self, now: int) -> None:
        # The three listings in one message; a failed one skips the pass: an
        # error is never read as "absent".
        with self.p.batch() as b:
            listed = b.store_list("active"), b.instances_list(), b.storage_list_volumes()
        rows, containers = listed[0].result(), listed[1].result()
        volumes = set(listed[2].result())
        updates, unchanged = [], []
        for w in rows:
            i = w["id"]
            has_c, has_v = i in containers, i in volumes
            if w["deleted_at"] is not None and not has_c and not has_v:
                obs = "DELETED"
            elif has_c and containers[i]:
                obs = "RUNNING"
            elif has_v:
                obs = "STANDBY"
            else:
                obs = "PENDING"
            patch: dict = {}
            cond: dict = {}
            if terminal(w):
                health = "ERROR"
            elif has_c and not has_v:
                health = "ERROR"
                if w["error_info"] is None:  # the C3 exception, once, only while null
                    patch["error_info"] = {"reason": "Mismatch", "message": "container exists without its volume",
                                           "is_terminal": True, "operation": w["operation"], "error_count": w["error_count"],
                                           "context": {"violation": "ContainerWithoutVolume", "expected": "volume_exists=true", "actual": "false"},
                                           "occurred_at": now}
                    cond["error_info_null"] = True
            else:
                health = "OK"
            if obs != w["observed_status"]:
                patch["observed_status"] = obs
            if health != w["health_status"]:
                patch["health_status"] = health
            w["observed_status"], w["health_status"] = obs, health
            if patch:
                patch["observed_at"] = now
                updates.append((i, cond, patch))
            else:
                unchanged.append(i)
        # Both writes in one message. The StateReconciler and the TTL
        # Manager, when due before the next pass, run at this step instead,
        # on listings read in the same message after the writes: one message
        # a pass, not three.
        after = now + self.period(rows)
        with self.p.batch() as b:
            done = [b.store_update_many(self.writer("health_monitor"), updates)] if updates else []
            done.append(b.store_mark_observed(self.writer("health_monitor"), unchanged, now))
            for name, selection in (("reconcile", "all"), ("ttl", "ttl")):
                if self.next[name] < after:
                    self.next[name] = now
                    self.listed[name] = (now, b.store_list(selection))
        for d in done:
            d.result()  # a failed write (fenced: deposed) ends the pass
        self.next["health"] = after

    def listing(self, component: str, selection: str, now: int) -> list:
        """The rows of selection: read for component by this step's
        HealthMonitor pass, else now."""
        listed = self.listed.pop(component, None)
        if listed is not None and listed[0] == now:
            return listed[1].result()
        return self.p.store_list(selection)

    @staticmethod
    def period(rows: list) -> int:
        """SPEC 3: 2 s while an operation runs, 5 s while a healthy workspace
        is away from its desired state, else 30 s."""
        if any(w["operation"] != "NONE" for w in rows):
            return PERIOD_BUSY
        if any(not in_error(w) and w["deleted_at"] is None and w["observed_status"] != w["desired_state"]
               and w["observed_status"] != "DELETED" for w in rows):
            return PERIOD_ACTIVE
        return PERIOD_IDLE

    # ---- StateReconciler (SPEC 4.2) --------------------------------------------------

    def reconcile(self, now: int) -> None:
        # Every row, not only the reconcile filter's: an unrestored STANDBY
        # workspace at its desired STANDBY is restored too (SPEC 4.2.1).
        rows = [w for w in self.listing("reconcile", "all", now) if w["operation"] != "NONE" or w["observed_status"] != "DELETED"]
        for w in rows:
            try:
                self.reconcile_one(w, now)
            except (StepDown, cd.Fenced, cd.NotLeader):
                raise
            except cd.PortError:
                continue  # a failure for one workspace skips it this tick
        self.next["reconcile"] = now + self.period(rows)

    def reconcile_one(self, w: dict, now: int) -> None:
        op, deleted = w["operation"], w["deleted_at"] is not None
        if w["observed_status"] == "DELETED" and op == "NONE":
            return  # 1. terminal
        # 2. ERROR skip (C11), with the soft-delete exception.
        if in_error(w) and not (deleted and op == "DELETING"):
            if op != "NONE" and not (w["observed_status"] == "DELETED" and completed(w)):
                reason, message, ctx = self.error_of(w)
                return self.enter_error(w, now, reason, message, ctx)
            if op == "NONE":
                ei = w.get("error_info")
                if deleted and not (ei and now - ei["occurred_at"] < RETRY_INTERVAL):
                    self.claim(w, "DELETING", now)
                return
        # 3. an operation in progress: completion, timeout, resume or retry.
        if op != "NONE":
            if completed(w):
                return self.complete(w, now)
            if w["op_started_at"] is not None and now - w["op_started_at"] > TIMEOUTS[op]:
                return self.enter_error(w, now, "Timeout", f"{op} exceeded its timeout",
                                        {"operation": op, "elapsed_seconds": (now - w["op_started_at"]) // S})
            if w["observed_status"] != "DELETED" and self.may_invoke(w, now):
                self.execute(w, now)
            return
        # 4. converged (an unrestored STANDBY is not: its volume needs its archive).
        if not deleted and w["observed_status"] == w["desired_state"] and not (w["observed_status"] == "STANDBY" and unrestored(w)):
            return
        # 5. choose, claim by compare-and-set, execute.
        chosen = choose(w)
        if chosen is not None:
            self.claim(w, chosen, now)

    def error_of(self, w: dict) -> tuple:
        """The terminal error an operation in progress enters ERROR with."""
        ei = w.get("error_info")
        if ei and ei.get("is_terminal"):
            return ei["reason"], ei["message"], ei.get("context") or {}
        return "Mismatch", "container exists without its volume", {"violation": "ContainerWithoutVolume"}

    def may_invoke(self, w: dict, now: int) -> bool:
        """Resume (not invoked by this leader yet) or retry (a failure since,
        30 s old); never within 30 s of a failure (4.2.4, also after failover)."""
        i, ei = w["id"], w.get("error_info")
        if i in self.failed and now - self.failed[i] < RETRY_INTERVAL:
            return False
        if ei and not ei["is_terminal"] and now - ei["occurred_at"] < RETRY_INTERVAL:
            return False
        if w["operation"] == "STARTING" and w["observed_status"] not in ("STANDBY", "RUNNING"):
            return False  # C6: never start without a volume; the timeout ends it
        last = self.invoked.get(i)
        if last is None or (last[0] != w["op_started_at"] and "resume-by-mark" not in BUGS):
            return True  # not invoked for this claim yet: resume it
        return bool(ei and not ei["is_terminal"] and ei["occurred_at"] >= last[1])

    def claim(self, w: dict, op: str, now: int) -> None:
        patch: dict = {"operation": op, "op_started_at": now, "error_count": 0}
        if op == "ARCHIVING":
            # The op_id first (C7): an unrestored volume re-archives under its
            # archive's own op_id (nothing is uploaded); an op_id an ERROR
            # kept is reused; else a new one.
            patch["op_id"] = (op_of_key(w["id"], w["archive_key"]) if unrestored(w) else None) or w["op_id"] or self.p.new_id()
        elif op != "DELETING" and w["op_id"]:
            patch["op_id"] = None  # the volume may change from here on
        if op == "RESTORING":
            patch["home_ctx"] = None  # a stale marker must not complete it
        cond: dict = {"operation": "NONE"}
        if op != "DELETING":
            cond["not_terminal"] = True
        if "no-cas-claim" in BUGS:
            cond = {}
        if not self.p.store_update(self.writer("state_reconciler"), w["id"], cond, patch):
            return
        w.update(patch)
        self.trigger(w["id"])
        self.next["health"] = now  # observe soon: completion is observed, never assumed
        self.execute(w, now)

    def trigger(self, ws_id: str) -> None:
        """SPEC 3: the StateReconciler publishes the workspace's id on
        monitor:trigger after each claim, completion and ERROR entry, so the
        HealthMonitor looks again at once; a publish that fails is ignored."""
        try:
            self.p.bus_publish("monitor:trigger", ws_id)
        except (cd.Fenced, cd.NotLeader):
            raise
        except cd.PortError:
            pass

    def execute(self, w: dict, now: int) -> None:
        """Invokes w's operation's actuator calls, in order (SPEC 4.2.2). A
        failure is recorded for a retry; the operation completes only once
        the HealthMonitor observes it."""
        i, op = w["id"], w["operation"]
        self.invoked[i] = (w["op_started_at"], now)
        try:
            if op == "PROVISIONING":
                self.check_lease()
                self.p.storage_provision(i)
            elif op == "RESTORING":
                self.check_lease()
                self.p.storage_provision(i)
                self.check_lease()
                got = self.p.storage_restore(i, w["archive_key"])
                self.write(w, {"home_ctx": {"restore_marker": got}})
            elif op == "STARTING":
                self.check_lease()
                self.p.instances_start(i, w["image_ref"])
            elif op == "STOPPING":
                self.check_lease()
                self.p.instances_delete(i)
            elif op == "ARCHIVING":
                self.archive(w)
            elif op == "DELETING":
                self.check_lease()
                self.p.instances_delete(i)
                self.check_lease()
                self.p.storage_delete_volume(i)
        except (StepDown, cd.Fenced, cd.NotLeader, cd.Crashed):
            raise
        except cd.PortError as e:
            self.failed[i] = now
            self.record_failure(w, now, e)
            return
        self.next["health"] = now

    def archive(self, w: dict) -> None:
        i, op_id = w["id"], w["op_id"]
        expected = archive_key(i, op_id)
        if w["archive_key"] != expected:
            if "key-after-delete" in BUGS:  # the bug: the volume goes first
                self.check_lease()
                self.p.instances_delete(i)
                self.check_lease()
                self.p.storage_delete_volume(i)
            self.check_lease()
            key = self.p.storage_archive(i, op_id)
            # C8: archive_key is committed before the volume goes; the
            # volume now equals the archive (restore_marker).
            self.write(w, {"archive_key": key, "home_ctx": {"restore_marker": key}})
        if w["observed_status"] != "PENDING":
            self.check_lease()
            self.p.instances_delete(i)  # the container before the volume (C8)
            self.check_lease()
            self.p.storage_delete_volume(i)

    def write(self, w: dict, patch: dict) -> None:
        """A reconciler write on w's operation in progress."""
        if self.p.store_update(self.writer("state_reconciler"), w["id"], {"operation": w["operation"]}, patch):
            w.update(patch)
        else:
            raise cd.PortError("the operation changed under the reconciler")

    def record_failure(self, w: dict, now: int, err: cd.PortError) -> None:
        reason, at_once, code = classify(err)
        count = w["error_count"] + 1
        ctx = {"code": code, "action": w["operation"].lower()}
        if isinstance(err, cd.ProviderError):
            ctx.update(err.context)
        if at_once or count >= MAX_ATTEMPTS:
            if not at_once:
                reason, ctx = "RetryExceeded", {"max_retries": MAX_ATTEMPTS, "last_error": err.text}
            return self.enter_error(w, now, reason, err.text, ctx, count)
        info = {"reason": reason, "message": err.text, "is_terminal": False, "operation": w["operation"],
                "error_count": count, "context": ctx, "occurred_at": now}
        try:
            self.write(w, {"error_count": count, "error_info": info, "error_message": err.text})
        except (cd.Fenced, cd.NotLeader):
            raise
        except cd.PortError:
            pass  # self.failed still spaces the retry

    def enter_error(self, w: dict, now: int, reason: str, message: str, ctx: dict, count: Optional[int] = None) -> None:
        """SPEC 4.2.5: one write; op_id kept (it protects the archive). count
        is set when a failed attempt is what enters ERROR."""
        patch: dict = {"operation": "NONE", "op_started_at": None, "error_message": message,
                       "previous_status": w["observed_status"],
                       "error_info": {"reason": reason, "message": message, "is_terminal": True, "operation": w["operation"],
                                      "error_count": count if count is not None else w["error_count"], "context": ctx, "occurred_at": now}}
        if count is not None:
            patch["error_count"] = count
        try:
            self.write(w, patch)
            self.trigger(w["id"])
        except (cd.Fenced, cd.NotLeader):
            raise
        except cd.PortError:
            pass
        self.invoked.pop(w["id"], None)

    def complete(self, w: dict, now: int) -> None:
        op = w["operation"]
        if op in ("RESTORING", "STARTING", "STOPPING"):
            # Through the API service layer, before clearing the operation.
            self.p.store_update(self.writer("api", "state_reconciler"), w["id"], {}, {"last_access_at": now})
        patch: dict = {"operation": "NONE", "op_started_at": None, "error_count": 0, "error_info": None, "error_message": None}
        if op == "ARCHIVING":
            patch["op_id"] = None
        self.write(w, patch)
        self.trigger(w["id"])
        self.invoked.pop(w["id"], None)
        self.failed.pop(w["id"], None)

    # ---- TTL Manager (SPEC 4.4) ------------------------------------------------------

    def ttl(self, now: int) -> None:
        self.next["ttl"] = now + TTL_PERIOD
        rows = [w for w in self.listing("ttl", "ttl", now)
                if w["deleted_at"] is None and w["health_status"] == "OK" and w["operation"] == "NONE"]
        idle = {w["id"]: now - (w["last_access_at"] or 0) for w in rows}
        stop = [w for w in rows if w["observed_status"] == "RUNNING" and w["desired_state"] == "RUNNING"
                and idle[w["id"]] > w["standby_ttl_seconds"] * S]
        # The activity of every candidate in one message: its connections
        # and its idle timer.
        with self.p.batch() as b:
            activity = [(b.bus_get(f"ws_conn:{w['id']}"), b.bus_get(f"idle_timer:{w['id']}")) for w in stop]
        for w, (conns, timer) in zip(stop, activity):
            try:
                if int(conns.result() or 0) <= 0 and timer.result() is None:
                    self.lower(w, "STANDBY")
            except (cd.Fenced, cd.NotLeader):
                raise
            except (cd.PortError, ValueError):
                continue  # activity unknown: never stop a workspace on a guess
        for w in rows:
            if w["observed_status"] == "STANDBY" and w["desired_state"] == "STANDBY" and idle[w["id"]] > w["archive_ttl_seconds"] * S:
                self.lower(w, "PENDING")

    def lower(self, w: dict, to: str) -> None:
        """Through the API service layer, conditioned on what was read."""
        cond = {"operation": "NONE", "desired_state": w["desired_state"], "not_deleted": True, "not_terminal": True}
        try:
            self.p.store_update(self.writer("api", "ttl_manager"), w["id"], cond, {"desired_state": to})
        except (cd.Fenced, cd.NotLeader):
            raise
        except cd.PortError:
            pass

    # ---- Archive GC (SPEC 4.5) -----------------------------------------------------------

    def gc(self, now: int) -> None:
        self.next["gc"] = now + GC_PERIOD
        # A failed listing or query skips the cycle. The protection set is
        # read after the listing, so an archive committed in between is
        # seen protected (C9).
        objects = [k for k, _ in self.p.objects_list("archives/")]
        rows = {w["id"]: w for w in self.p.store_list("all")}
        present = set(objects)
        for key in objects:
            meta = key.endswith(".meta")
            archive = key[:-len(".meta")] if meta else key
            if meta and archive in present:
                continue  # judged with its archive
            timer = f"gc_orphan:{archive}"
            try:
                if self.protected(rows, archive):
                    self.p.bus_del(timer)
                    continue
                first = self.p.bus_get(timer)
                if first is None:
                    self.p.bus_set(timer, str(now))
                    continue
                if now - int(first) >= ORPHAN_DELAY:
                    for k in (archive, archive + ".meta"):
                        if k in present:
                            self.check_lease()  # before each delete (SPEC 3.1)
                            self.p.objects_delete(k)
                    self.p.bus_del(timer)
            except (StepDown, cd.Fenced, cd.NotLeader):
                raise
            except (cd.PortError, ValueError):
                continue

    @staticmethod
    def protected(rows: dict, archive: str) -> bool:
        """C9: the archive_key, anything under the op_id, any archive of a
        workspace in ERROR; a soft-deleted workspace protects nothing."""
        parts = archive.split("/")
        if len(parts) < 4 or parts[0] != "archives":
            return False
        w = rows.get(parts[1])
        if w is None or w["deleted_at"] is not None:
            return False
        return archive == w["archive_key"] or (w["op_id"] is not None and parts[2] == w["op_id"]) or in_error(w)


class API:
    """The API service layer (SPEC 4.3): the only writer of desired_state."""

    NAME_MAX, IMAGE_MAX, TTL_MAX = 255, 512, 10 * 365 * 86400

    def __init__(self, ports: cd.Ports) -> None:
        self.p = ports

    def writer(self, component: str = "api", on_behalf: Optional[str] = None) -> dict:
        w = {"component": component, "instance": self.p.instance}
        if on_behalf:
            w["on_behalf"] = on_behalf
        return w

    @staticmethod
    def bad(msg: str) -> cd.APIError:
        return cd.APIError(400, "BAD_REQUEST", msg)

    def text(self, field: str, v: Any, limit: int, required: bool) -> None:
        if not isinstance(v, str) or (required and not v):
            raise self.bad(f"{field} is required")
        if "\x00" in v or any(0xD800 <= ord(c) <= 0xDFFF for c in v):
            raise self.bad(f"{field} must be valid UTF-8 without NUL characters")
        if len(v) > limit:
            raise self.bad(f"{field} is longer than {limit} characters")

    def ttl_field(self, field: str, v: Any) -> None:
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not 0 < v <= self.TTL_MAX):
            raise self.bad(f"{field} must be between 1 and {self.TTL_MAX} seconds")

    def desired(self, v: Any) -> str:
        if v not in LEVEL:
            raise self.bad("desired_state must be PENDING, STANDBY or RUNNING")
        return v

    def visible(self, user: str, ws_id: str, admin: bool = False) -> dict:
        try:
            w = self.p.store_get(ws_id)
        except cd.NotFound:
            w = None
        if w is None or (not admin and w["owner_user_id"] != user) or w["deleted_at"] is not None or w["observed_status"] == "DELETED":
            raise cd.APIError(404, "NOT_FOUND", "workspace not found")
        return w

    def check_limits(self, owner: str, ws_id: Optional[str] = None) -> None:
        """Per user first, then global. A workspace counts when not deleted,
        healthy, and desired or observed RUNNING (SPEC 4.3 as amended),
        leaving the written workspace ws_id itself out."""
        running = [w for w in self.p.store_list("active") if w["deleted_at"] is None and w["health_status"] == "OK"
                   and "RUNNING" in (w["desired_state"], w["observed_status"]) and w["id"] != ws_id]
        mine = [w["id"] for w in running if w["owner_user_id"] == owner]
        if len(mine) >= self.p.max_running_per_user:
            raise cd.APIError(429, "workspace_limit_exceeded", f"per_user running-workspace limit reached: {len(mine)} of {self.p.max_running_per_user}",
                              {"limit_type": "per_user", "current": len(mine), "max": self.p.max_running_per_user, "running_workspaces": mine})
        if len(running) >= self.p.max_running_global:
            raise cd.APIError(429, "workspace_limit_exceeded", f"global running-workspace limit reached: {len(running)} of {self.p.max_running_global}",
                              {"limit_type": "global", "current": len(running), "max": self.p.max_running_global})

    def update(self, writer: dict, ws_id: str, cond: dict, patch: dict) -> None:
        if not self.p.store_update(writer, ws_id, cond, patch):
            raise cd.APIError(409, "INVALID_STATE", "the workspace changed meanwhile (an operation may have started): retry")

    def create(self, user: str, r: dict) -> dict:
        self.text("name", r.get("name"), self.NAME_MAX, True)
        self.text("image_ref", r.get("image_ref"), self.IMAGE_MAX, True)
        self.text("description", r.get("description", ""), 64 << 10, False)
        self.ttl_field("standby_ttl_seconds", r.get("standby_ttl_seconds"))
        self.ttl_field("archive_ttl_seconds", r.get("archive_ttl_seconds"))
        desired = self.desired(r.get("desired_state") or "RUNNING")
        if desired == "RUNNING":
            self.check_limits(user)
        now = self.p.now
        ws_id = r.get("id") or self.p.new_id()
        w = {"id": ws_id, "owner_user_id": user, "name": r["name"], "description": r.get("description") or None, "memo": None,
             "image_ref": r["image_ref"], "instance_backend": "local-docker", "storage_backend": "docker-volume",
             "home_store_key": f"ws-{ws_id}-home", "home_ctx": None, "observed_status": "PENDING", "health_status": "OK",
             "observed_at": None, "operation": "NONE", "op_started_at": None, "op_id": None, "archive_key": None,
             "error_count": 0, "error_info": None, "error_message": None, "previous_status": None, "desired_state": desired,
             "deleted_at": None, "standby_ttl_seconds": r.get("standby_ttl_seconds") or 300,
             "archive_ttl_seconds": r.get("archive_ttl_seconds") or 86400, "last_access_at": now,
             "created_at": now, "updated_at": now}
        self.p.store_insert(self.writer(), w)
        return w

    def get(self, user: str, ws_id: str) -> dict:
        return self.visible(user, ws_id)

    def list(self, user: str) -> list:
        return [w for w in self.p.store_list("active") if w["owner_user_id"] == user and w["deleted_at"] is None]

    def patch(self, user: str, ws_id: str, r: dict) -> dict:
        w = self.visible(user, ws_id)
        patch: dict = {}
        for field, limit, required in (("name", self.NAME_MAX, True), ("description", 64 << 10, False), ("memo", 64 << 10, False)):
            if r.get(field) is not None:
                self.text(field, r[field], limit, required)
                patch[field] = r[field]
        for field in ("standby_ttl_seconds", "archive_ttl_seconds"):
            self.ttl_field(field, r.get(field))
            if r.get(field) is not None:
                patch[field] = r[field]
        cond: dict = {"not_deleted": True}
        if r.get("desired_state") is not None:
            to = self.desired(r["desired_state"])
            if to != w["desired_state"]:
                self.check_change(w)
                if to == "RUNNING":
                    self.check_limits(w["owner_user_id"], ws_id)
                patch["desired_state"] = to
                cond.update({"operation": "NONE", "desired_state": w["desired_state"], "not_terminal": True})
        if not patch:
            return w
        self.update(self.writer(), ws_id, cond, patch)
        w.update(patch)
        w["updated_at"] = self.p.now
        return w

    @staticmethod
    def check_change(w: dict) -> None:
        """409 while an operation runs, and for a terminal error_info until
        recovered (the API judges ERROR by error_info, SPEC 4.3)."""
        if w["operation"] != "NONE":
            raise cd.APIError(409, "INVALID_STATE", f"operation {w['operation']} is in progress")
        if terminal(w):
            raise cd.APIError(409, "INVALID_STATE", "workspace is in ERROR: recover it first")

    def delete(self, user: str, ws_id: str) -> None:
        w = self.visible(user, ws_id)
        if w["operation"] != "NONE":
            raise cd.APIError(409, "INVALID_STATE", f"operation {w['operation']} is in progress")
        self.update(self.writer(), ws_id, {"operation": "NONE", "not_deleted": True},
                    {"deleted_at": self.p.now, "desired_state": "PENDING"})

    def recover(self, admin: str, ws_id: str) -> None:
        w = self.visible(admin, ws_id, admin=True)
        if w["health_status"] != "ERROR":
            raise cd.APIError(409, "INVALID_STATE", "workspace health is not ERROR")
        # Only while error_info is terminal, checked in the write itself:
        # of concurrent recoveries one resets the row, the others get 409.
        if not self.p.store_update(self.writer("admin"), ws_id, {"terminal": True},
                                   {"error_info": None, "error_count": 0, "error_message": None}):
            raise cd.APIError(409, "INVALID_STATE", "workspace is no longer in ERROR")
        try:
            self.p.bus_publish("monitor:trigger", ws_id)
        except cd.PortError:
            pass  # a hint

    def wake(self, ws_id: str) -> None:
        """The proxy's auto-wake of a STANDBY workspace (limits apply)."""
        try:
            w = self.p.store_get(ws_id)
        except cd.NotFound:
            raise cd.APIError(404, "NOT_FOUND", "workspace not found") from None
        if w["deleted_at"] is not None or w["observed_status"] != "STANDBY":
            raise cd.APIError(409, "INVALID_STATE", "only a STANDBY workspace is woken")
        if w["desired_state"] == "RUNNING":
            return
        self.check_change(w)
        self.check_limits(w["owner_user_id"], ws_id)
        self.update(self.writer("api", "proxy"), ws_id,
                    {"operation": "NONE", "desired_state": w["desired_state"], "not_deleted": True, "not_terminal": True},
                    {"desired_state": "RUNNING"})


USAGE = """usage: coordinator.py [--bug no-cas-claim] [--bug key-after-delete] [--bug resume-by-mark]

Serves a workspace coordinator or API over converge's driver protocol on
standard input and output; run it with converge sim --exec."""


def main(argv: list) -> None:
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            print(USAGE)
            return
        if a == "--bug" and args:
            bug = args.pop(0)
        elif a.startswith("--bug="):
            bug = a[len("--bug="):]
        else:
            print(f"coordinator.py: unexpected argument {a!r}\n\n{USAGE}", file=sys.stderr)
            sys.exit(2)
        if bug not in ("no-cas-claim", "key-after-delete", "resume-by-mark"):
            print(f"coordinator.py: unknown bug {bug!r} (known: no-cas-claim, key-after-delete, resume-by-mark)", file=sys.stderr)
            sys.exit(2)
        BUGS.add(bug)
    name = "python-example" + "".join("+" + b for b in sorted(BUGS))
    cd.main(coordinator=Coordinator, api=API, name=name)


if __name__ == "__main__":
    main(sys.argv[1:])
