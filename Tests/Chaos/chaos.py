#!/usr/bin/env python3
"""Chaos test (issue 16, "Real processes"): `hearth serve` and several `hearth connect` clients
as real processes; for a bounded run, clients and the server are SIGKILLed and restarted at
random moments (clients also go offline and online) while the clients write unique values,
increment a shared counter by transaction, keep a presence entry with an onDisconnect remove
and listen to the counter. Then everything is restarted and drained, all clients but one quit,
and the server's data is checked:

1. every write acknowledged ok to any client run is on the server with its value;
2. every write a client printed `saved` (then possibly got killed) is on the server too, and has
   exactly one `ack` — none is lost with a killed process (a write's answer stays in the store
   until the app's handler has run and is reported at the next start), and one is printed again
   only in a later run, identical, after the run that printed it was killed before the
   acknowledgement was written (as for transactions below);
3. the counter: every transaction queued has exactly one outcome — none is lost with a killed
   process (an outcome stays in the store until the app's handler has run and is reported at the
   next start), and one is reported again only in a later run, identical, after the run that
   printed it was killed before the acknowledgement was written ("redelivered", Hearth's
   at-least-once window); committed <= counter <= committed + disconnect (a transaction in flight
   at a kill ends `disconnect`: applied or not is unknown), and disconnect <= queued - committed;
4. presence holds exactly the client kept alive (onDisconnect ran for every other client,
   killed-and-restarted ones included);
5. the kept client's counter listener converges to the server's counter;
6. `hearth verify` exits 0 on every client store and on the server's data directory.

Usage: chaos.py --hearth .build/debug/hearth --seconds 90 --seed 1234 --clients 4
Exit 0 when everything holds, 1 with a report otherwise. Standard library only.
The work directory (stores, transcripts, stderr) is printed, and kept when a check fails.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

NS = "chaos"


def log(msg):
    print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Server:
    """`hearth serve` on a port fixed by its first start, so restarts keep the URL."""

    def __init__(self, hearth, work, idle):
        self.hearth, self.dir, self.idle = hearth, os.path.join(work, "server"), idle
        self.port_file = os.path.join(work, "server.port")
        self.err = open(os.path.join(work, "server.stderr"), "ab")
        self.port, self.proc, self.starts, self.kills = 0, None, 0, 0

    def start(self):
        for attempt in range(50):
            if os.path.exists(self.port_file):
                os.remove(self.port_file)
            self.proc = subprocess.Popen(
                [self.hearth, "serve", self.dir, "--port", str(self.port), "--port-file", self.port_file,
                 "--emulator", "--idle-timeout", str(self.idle)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
            deadline = time.time() + 15
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    with open(self.port_file) as f:
                        text = f.read().strip()
                    if text:
                        self.port = int(text)
                        self.starts += 1
                        return
                except (OSError, ValueError):
                    pass
                time.sleep(0.02)
            self.proc.kill()
            self.proc.wait()
            time.sleep(0.2)  # the port may still be held; try again
        raise RuntimeError("hearth serve did not start (see server.stderr)")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.kills += 1

    def stop(self):
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def url(self):
        return f"ws://127.0.0.1:{self.port}?ns={NS}"

    def rest(self, path="/"):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}.json?ns={NS}", timeout=20) as r:
            return json.loads(r.read())


class Client:
    """One client store, run as successive `hearth connect` processes (killed or quit)."""

    def __init__(self, i, hearth, work, rng):
        self.i, self.hearth, self.rng = i, hearth, rng
        self.store = os.path.join(work, f"c{i}")
        self.transcript = open(os.path.join(work, f"c{i}.transcript"), "a")
        self.err = open(os.path.join(work, f"c{i}.stderr"), "ab")
        self.lock = threading.Lock()
        self.proc, self.run = None, 0
        self.next_n = 0
        # Across runs (write ids and transaction ids are the store's, durable across runs).
        self.saved = {}          # writeId -> (path, value, run)
        self.acks = []           # (writeId, ok, error, run)
        self.tx_queued = set()
        self.tx_queued_run = {}  # transaction id -> the run that queued it
        self.tx_results = []     # (transactionId, committed, error, run)
        self.errors = []         # error lines
        self.kills = 0
        self.killed_runs = set()  # the runs that ended with SIGKILL
        self.closed_exit = []
        # Per run.
        self.connected = False
        self.od_pending = None   # id of the onDisconnect registered on the latest connection
        self.od_ok = False
        self.pending_reply = None
        self.counter_seen = None
        self.offline_until = 0.0
        self.closed = None

    def start(self, url):
        self.run += 1
        self.connected, self.od_pending, self.od_ok, self.pending_reply, self.closed = False, None, False, None, None
        self.offline_until = 0.0
        self.transcript.write(f"--- run {self.run}\n")
        self.proc = subprocess.Popen([self.hearth, "connect", self.store, url], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.err, bufsize=0)
        self.reader = threading.Thread(target=self._read, args=(self.proc, self.run), daemon=True)
        self.reader.start()
        self.send({"op": "listen", "path": "counter", "events": ["value"], "tag": "counter"})

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def send(self, obj):
        line = (json.dumps(obj) + "\n").encode()
        with self.lock:
            try:
                self.proc.stdin.write(line)
            except (BrokenPipeError, OSError, ValueError):
                pass  # killed: the next run takes over

    def _read(self, proc, run):
        for raw in proc.stdout:
            try:
                m = json.loads(raw)
            except ValueError:
                with self.lock:
                    self.errors.append(f"run {run}: unparsable line {raw!r}")
                continue
            with self.lock:
                self.transcript.write(raw.decode(errors="replace"))
                t = m.get("type")
                if t == "saved" and "writeId" in m:
                    if m["writeId"] in self.saved:  # write ids are the store's: never reused
                        self.errors.append(f"run {run}: write id {m['writeId']} reused (was {self.saved[m['writeId']]})")
                    self.saved[m["writeId"]] = (m.get("path"), m.get("id"), run)
                elif t == "ack":
                    self.acks.append((m["writeId"], m.get("ok"), m.get("error"), run))
                elif t == "queued" and m.get("op") == "transaction":
                    self.tx_queued.add(m["transactionId"])
                    self.tx_queued_run.setdefault(m["transactionId"], run)
                elif t == "transaction":
                    self.tx_results.append((m["transactionId"], m.get("committed"), m.get("error"), run))
                elif t == "connected":
                    self.connected = bool(m.get("connected"))
                    if self.connected:
                        # Firebase's presence pattern: on every connection, onDisconnect first,
                        # then the entry.
                        od = f"od{run}.{time.monotonic_ns()}"
                        self.od_pending, self.od_ok = od, False
                        register = [{"op": "onDisconnect", "path": f"presence/c{self.i}", "action": "remove", "id": od},
                                    {"op": "set", "path": f"presence/c{self.i}", "value": True}]
                        for obj in register:
                            try:
                                proc.stdin.write((json.dumps(obj) + "\n").encode())
                            except (BrokenPipeError, OSError, ValueError):
                                pass
                elif t == "onDisconnect":
                    if m.get("id") == self.od_pending and m.get("ok"):
                        self.od_ok = True
                elif t == "pending":
                    self.pending_reply = m.get("writeIds")
                elif t == "event" and m.get("tag") == "counter":
                    self.counter_seen = m.get("value")
                elif t == "closed":
                    self.closed = m
                elif t == "error":
                    self.errors.append(f"run {run}: {raw.decode(errors='replace').strip()}")
        self.transcript.flush()

    def write(self):
        n = self.next_n
        self.next_n += 1
        self.send({"op": "set", "path": f"c{self.i}/w{n}", "value": n, "id": f"w{n}"})

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.reader.join(timeout=10)
        self.kills += 1
        self.killed_runs.add(self.run)

    def quit(self, timeout=30):
        self.send({"op": "quit"})
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = "timeout"
        self.reader.join(timeout=10)
        return code

    def outstanding_tx(self):
        """This run's transactions without an outcome yet. (One queued by an earlier run is
        reported by a later run, whatever happened to the process: `lost_tx` lists those never
        reported, which must be none.)"""
        done = {t for t, _, _, _ in self.tx_results}
        return {t for t in self.tx_queued - done if self.tx_queued_run.get(t) == self.run}

    def outstanding_writes(self):
        """This run's writes (`wN`) without an ack yet."""
        done = {w for w, _, _, _ in self.acks}
        return {w for w, (_, ident, run) in self.saved.items()
                if run == self.run and ident and ident.startswith("w") and w not in done}

    def lost_tx(self):
        done = {t for t, _, _, _ in self.tx_results}
        return {t for t in self.tx_queued - done if self.tx_queued_run.get(t) != self.run}


def chaos(args, rng, server, clients):
    """The bounded run: writes, transactions, kills, restarts, offline spells."""
    end = time.time() + args.seconds
    restart_at = {}            # client index -> time
    server_restart_at = None
    stats = {"client_kills": 0, "server_kills": 0, "offline": 0, "writes": 0, "transactions": 0}
    while time.time() < end:
        now = time.time()
        if not server.alive():
            if server_restart_at is not None and now >= server_restart_at:
                server.start()
                server_restart_at = None
        elif rng.random() < 0.004:   # ~ every 5 s at 20 ticks/s
            server.kill9()
            stats["server_kills"] += 1
            server_restart_at = now + rng.uniform(0.2, 3.0)
            log(f"server SIGKILLed (restart in {server_restart_at - now:.1f} s)")
        for c in clients:
            if not c.alive():
                if now >= restart_at.get(c.i, 0):
                    c.start(server.url())
                continue
            if rng.random() < 0.006:
                c.kill9()
                stats["client_kills"] += 1
                restart_at[c.i] = now + rng.uniform(0.1, 2.0)
                continue
            if c.offline_until and now >= c.offline_until:
                c.send({"op": "goOnline"})
                c.offline_until = 0.0
            elif not c.offline_until and rng.random() < 0.004:
                c.send({"op": "goOffline"})
                c.offline_until = now + rng.uniform(0.3, 3.0)
                stats["offline"] += 1
            for _ in range(rng.randint(0, 2)):
                c.write()
                stats["writes"] += 1
            if rng.random() < 0.25:
                c.send({"op": "transaction", "path": "counter", "function": "increment", "argument": 1})
                stats["transactions"] += 1
        time.sleep(0.05)
    return stats


def drain(server, clients, timeout):
    """Everything up and online; each client answers `pending` empty, has no write without an
    ack and no transaction without an outcome, and its latest connection's onDisconnect is registered. Every client
    writes a heartbeat each second so the server's idle timeout does not close it meanwhile."""
    if not server.alive():
        server.start()
    for c in clients:
        if not c.alive():
            c.start(server.url())
        elif c.offline_until:
            c.send({"op": "goOnline"})
            c.offline_until = 0.0
    deadline = time.time() + timeout
    beat = 0
    while time.time() < deadline:
        beat += 1
        for c in clients:
            c.send({"op": "set", "path": f"heartbeat/c{c.i}", "value": beat})
        time.sleep(0.4)
        for c in clients:
            with c.lock:
                c.pending_reply = None
            c.send({"op": "pending"})
        time.sleep(0.6)
        not_done = []
        for c in clients:
            with c.lock:
                ok = (c.pending_reply == [] and not c.outstanding_tx() and not c.outstanding_writes()
                      and c.connected and c.od_ok)
            if not ok:
                not_done.append(c.i)
        if not not_done:
            return None
    return f"clients {not_done} did not drain within {timeout} s"


def verify(hearth, store):
    r = subprocess.run([hearth, "verify", store], capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def redelivery(rs, killed_runs):
    """Whether the outcomes `rs` ((ok, error, run) in print order) of one write or transaction
    are one outcome and its redeliveries: identical, each in a later run, every run but the last
    killed (before the acknowledgement was written)."""
    ok, err, _ = rs[0]
    runs = [r for _, _, r in rs]
    return (all((o, e) == (ok, err) for o, e, _ in rs) and len(set(runs)) == len(runs)
            and all(r in killed_runs for r in runs[:-1]))


def check(server, clients, keep, data, violations, notes):
    data = data or {}
    committed, disconnect, other_fail, lost, redelivered = [], 0, {}, 0, 0
    writes_lost, writes_redelivered = 0, 0
    queued = 0
    for c in clients:
        mine = data.get(f"c{c.i}") or {}
        # Writes: path -> value from the saved lines (id "wN" echoes value N).
        written = {}
        for wid, (path, ident, run) in c.saved.items():
            if ident and ident.startswith("w"):
                written[wid] = (path, int(ident[1:]))
        acked_ok = {wid for wid, ok, _, _ in c.acks if ok}
        for wid, ok, err, run in c.acks:
            if not ok:
                violations.append(f"c{c.i}: write {wid} ({c.saved.get(wid)}) acknowledged with an error: {err} (run {run})")
        for wid, (path, n) in sorted(written.items()):
            key = path.rsplit("/", 1)[-1]
            got = mine.get(key)
            if got != n:
                kind = "acknowledged ok" if wid in acked_ok else "saved (never acknowledged to a run)"
                violations.append(f"c{c.i}: write {wid} {path}={n} {kind} but the server has {got!r}")
        for key, value in mine.items():
            if key != f"w{value}":
                violations.append(f"c{c.i}: the server has {key}={value!r}, not a value any client wrote")
        # One ack per saved write; a repeat only as a redelivery (identical, in a later run,
        # after each earlier run that printed it was killed).
        acks = {}
        for wid, ok, err, run in c.acks:
            acks.setdefault(wid, []).append((ok, err, run))
        for wid, rs in sorted(acks.items()):
            if len(rs) > 1:
                if not redelivery(rs, c.killed_runs):
                    violations.append(f"c{c.i}: write {wid} has {len(rs)} acks: {rs}")
                writes_redelivered += len(rs) - 1
        unacked = sorted(wid for wid in written if wid not in acks)
        writes_lost += len(unacked)
        if unacked:
            violations.append(f"c{c.i}: writes {unacked} were saved and never acknowledged to any run")
        # Transactions: one outcome each; a repeat only as a redelivery (identical, in a later
        # run, after each earlier run that printed it was killed).
        results = {}
        for tid, ok, err, run in c.tx_results:
            results.setdefault(tid, []).append((ok, err, run))
        for tid, rs in sorted(results.items()):
            ok, err, _ = rs[0]
            if len(rs) > 1:
                if not redelivery(rs, c.killed_runs):
                    violations.append(f"c{c.i}: transaction {tid} has {len(rs)} outcomes: {rs}")
                redelivered += len(rs) - 1
            if ok:
                committed.append((c.i, tid))
            elif err and "disconnect" in str(err):
                disconnect += 1
            else:
                other_fail[str(err)] = other_fail.get(str(err), 0) + 1
        queued += len(c.tx_queued | set(results))
        never = c.lost_tx()
        lost += len(never)
        if never:
            violations.append(f"c{c.i}: transactions {sorted(never)} were queued and never reported")
        for e in c.errors:
            violations.append(f"c{c.i}: error line: {e}")
    notes.append(f"writes: {writes_lost} acks lost, {writes_redelivered} redelivered after a kill")
    counter = data.get("counter") or 0
    n = len(committed)
    notes.append(f"transactions: {queued} queued, {n} committed, {disconnect} disconnect, other failures {other_fail or 'none'}; "
                 f"{lost} outcomes lost, {redelivered} redelivered after a kill; counter {counter}")
    if not (n <= counter <= n + disconnect):
        violations.append(f"counter {counter} is outside [committed {n}, committed + disconnect {n + disconnect}]")
    elif counter != n:
        notes.append(f"counter - committed = {counter - n}: transactions that ended `disconnect` but had been applied")
    if disconnect > queued - n:
        violations.append(f"{disconnect} disconnect outcomes > queued {queued} - committed {n}")
    presence = data.get("presence") or {}
    if presence != {f"c{keep.i}": True}:
        violations.append(f"presence is {presence!r}; expected only c{keep.i} (the client kept alive)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hearth", required=True)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--idle-timeout", type=int, default=5)
    ap.add_argument("--drain-timeout", type=float, default=120)
    ap.add_argument("--keep", action="store_true", help="keep the work directory on success too")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    hearth = os.path.abspath(args.hearth)
    if not os.access(hearth, os.X_OK):
        print(f"chaos: {hearth} is not an executable (build it first: swift build)", file=sys.stderr)
        return 2
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix=f"hearth-chaos-{seed}-")
    log(f"seed {seed} (rerun: --seed {seed}); {args.clients} clients, {args.seconds:g} s; work directory {work}")
    server = Server(hearth, work, args.idle_timeout)
    clients = [Client(i, hearth, work, rng) for i in range(args.clients)]
    violations, notes = [], []
    try:
        server.start()
        log(f"server on port {server.port}")
        stats = chaos(args, rng, server, clients)
        log(f"chaos done: {stats}; draining")
        problem = drain(server, clients, args.drain_timeout)
        if problem:
            violations.append(problem)
        keep = rng.choice(clients)
        for c in clients:
            if c is keep:
                continue
            code = c.quit()
            if code != 0:
                violations.append(f"c{c.i}: quit exited {code}")
            elif not c.closed or c.closed.get("pendingWrites") != 0:
                violations.append(f"c{c.i}: closed with {c.closed!r} after draining")
        time.sleep(1.0)  # the server runs the closed connections' onDisconnect operations
        keep.send({"op": "set", "path": f"heartbeat/c{keep.i}", "value": -1})
        data = server.rest("/")
        log(f"server data read; kept alive: c{keep.i}")
        check(server, clients, keep, data, violations, notes)
        deadline = time.time() + 15
        while time.time() < deadline and keep.counter_seen != data.get("counter"):
            time.sleep(0.2)
        if keep.counter_seen != data.get("counter"):
            violations.append(f"c{keep.i}'s counter listener last saw {keep.counter_seen!r}, the server has {data.get('counter')!r}")
        code = keep.quit()
        if code != 0:
            violations.append(f"c{keep.i}: quit exited {code}")
        server.stop()
        for store in [c.store for c in clients] + [server.dir]:
            rc, out = verify(hearth, store)
            if rc != 0:
                violations.append(f"hearth verify {store} exited {rc}: {out}")
        notes.append(f"kills: server {server.kills}, clients {[c.kills for c in clients]}; runs {[c.run for c in clients]}; "
                     f"writes saved {[len(c.saved) for c in clients]}; offline spells {stats['offline']}")
    except Exception as e:  # a harness failure is a failure, with the work directory kept
        violations.append(f"harness: {type(e).__name__}: {e}")
    finally:
        for c in clients:
            if c.alive():
                c.proc.kill()
                c.proc.wait()
        if server.alive():
            server.proc.kill()
            server.proc.wait()
    for n in notes:
        log(n)
    if violations:
        print(f"\nCHAOS FAILED (seed {seed}, work directory kept: {work}):", flush=True)
        for v in violations:
            print(f"  - {v}")
        return 1
    log(f"ok (seed {seed})")
    if args.keep:
        log(f"work directory kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
