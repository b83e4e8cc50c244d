"""Firebase's own Admin SDK (firebase-admin, PyPI) against a running `hearth serve`.

Run by Tests/HearthToolTests/ServeProcessTests.swift with FIREBASE_DATABASE_EMULATOR_HOST set
to the server; with that variable firebase-admin talks REST + Server-Sent Events with
`Authorization: Bearer owner`. Each check prints `ok NAME`; the first failure raises.
Usage: python firebase_admin_suite.py [admin | user UID | rules-user UID | rules-anonymous | rules-admin]
(the rules-* modes expect the server started with Tests/HearthToolTests/Python/presence.rules.json)
"""
import os
import queue
import sys
import threading

import firebase_admin
from firebase_admin import db, exceptions

mode = sys.argv[1] if len(sys.argv) > 1 else "admin"
options = {"databaseURL": "https://hearth-test.firebaseio.com", "projectId": "hearth-test"}
if mode in ("user", "rules-user"):
    options["databaseAuthVariableOverride"] = {"uid": sys.argv[2]}
if mode in ("anonymous", "rules-anonymous"):
    options["databaseAuthVariableOverride"] = None
app = firebase_admin.initialize_app(options=options, name=mode)


def ref(path):
    return db.reference(path, app=app)


def fail(message):
    """Ends the run at once: a listener's thread would otherwise keep the process alive."""
    print("FAIL", message, file=sys.stderr, flush=True)
    os._exit(1)


def check(name, got, want):
    if got != want:
        fail(f"{name}: got {got!r}, want {want!r}")
    print("ok", name, flush=True)


if mode == "anonymous":
    try:
        ref("secret").set(1)
        fail("an unauthenticated write succeeded")
    except exceptions.UnauthenticatedError:
        print("ok anonymous write denied", flush=True)
    sys.exit(0)

def denied(name, action):
    try:
        action()
    except exceptions.FirebaseError as e:
        print("ok", name, "denied:", type(e).__name__, flush=True)
        return
    fail(f"{name}: allowed, expected permission denied")


if mode == "rules-user":
    uid = sys.argv[2]
    ref(f"users/{uid}").set({"name": uid, "age": 30})
    check("rules: own user data", ref(f"users/{uid}").get(), {"name": uid, "age": 30})
    denied("rules: another user's data", lambda: ref("users/someone-else").set({"name": "x", "age": 1}))
    denied("rules: validation (age must be a number)", lambda: ref(f"users/{uid}").set({"name": uid, "age": "old"}))
    denied("rules: reading another user's data", lambda: ref("users/someone-else").get())
    ref(f"status/{uid}").set("online")
    check("rules: presence", ref(f"status/{uid}").get(), "online")
    denied("rules: another's presence", lambda: ref("status/someone-else").set("online"))
    print("all ok", flush=True)
    sys.exit(0)

if mode == "rules-anonymous":
    denied("rules: anonymous write", lambda: ref("users/u1").set({"name": "x", "age": 1}))
    denied("rules: anonymous read", lambda: ref("users/u1").get())
    check("rules: public read", ref("public").get(), None)
    print("all ok", flush=True)
    sys.exit(0)

if mode == "rules-admin":
    ref("users/anyone").set({"anything": True})
    check("rules: the admin bypasses rules", ref("users/anyone").get(), {"anything": True})
    print("all ok", flush=True)
    sys.exit(0)

if mode == "user":
    uid = sys.argv[2]
    ref(f"users/{uid}").set({"name": uid})
    check("user write", ref(f"users/{uid}/name").get(), uid)
    sys.exit(0)

# set / get
root = ref("t")
root.set({"a": 1, "b": {"c": "x"}, "big": 1542405709418655810})
check("get", root.get(), {"a": 1, "b": {"c": "x"}, "big": 1542405709418655810})
check("get child", ref("t/b/c").get(), "x")

# update (multi-path, relative)
root.update({"b/c": "y", "d": True})
check("update", root.get(), {"a": 1, "b": {"c": "y"}, "big": 1542405709418655810, "d": True})

# push: time-ordered 20-character keys
first = ref("list").push({"n": 1})
second = ref("list").push({"n": 2})
check("push key length", len(first.key), 20)
check("push order", sorted([first.key, second.key]), [first.key, second.key])
check("push value", ref("list").child(second.key).get(), {"n": 2})

# shallow
check("shallow", root.get(shallow=True), {"a": True, "b": True, "big": True, "d": True})

# queries
scores = ref("scores")
scores.set({"alice": {"score": 10}, "bob": {"score": 30}, "carol": {"score": 20}, "dave": {"score": 5}})
check("order_by_child limit_to_last", dict(scores.order_by_child("score").limit_to_last(2).get()),
      {"bob": {"score": 30}, "carol": {"score": 20}})
check("order_by_key start_at", list(scores.order_by_key().start_at("c").get().keys()), ["carol", "dave"])
check("order_by_child equal_to", dict(scores.order_by_child("score").equal_to(20).get()), {"carol": {"score": 20}})
vals = ref("vals")
vals.set({"x": 3, "y": 1, "z": 2})
check("order_by_value limit_to_first", list(vals.order_by_value().limit_to_first(2).get().keys()), ["y", "z"])
check("order_by_key end_at", list(vals.order_by_key().end_at("y").get().keys()), ["x", "y"])

# ETags and transactions (GET with X-Firebase-ETag, PUT with if-match, 412 on mismatch)
counter = ref("counter")
counter.set(0)
value, etag = counter.get(etag=True)
check("etag get", value, 0)
ok, value2, etag2 = counter.set_if_unchanged("not-the-etag", 99)
check("set_if_unchanged stale", (ok, value2, etag2 == etag), (False, 0, True))
ok, _, _ = counter.set_if_unchanged(etag, 1)
check("set_if_unchanged fresh", ok, True)
changed, _, _ = counter.get_if_changed(counter.get(etag=True)[1])
check("get_if_changed unchanged", changed, False)


def incr(current):
    return (current or 0) + 1


threads = [threading.Thread(target=lambda: counter.transaction(incr)) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
check("concurrent transactions", counter.get(), 9)

# listen (Server-Sent Events)
events = queue.Queue()
ref("live").delete()
listener = ref("live").listen(lambda e: events.put((e.event_type, e.path, e.data)))
check("listen first event", events.get(timeout=10), ("put", "/", None))
ref("live/x").set(1)
check("listen put", events.get(timeout=10), ("put", "/x", 1))
ref("live").update({"y": 2, "z/w": 3})
check("listen patch", events.get(timeout=10), ("patch", "/", {"y": 2, "z/w": 3}))
# The stream is UTF-8 and says so: firebase-admin decodes a text/event-stream without a charset
# as ISO-8859-1 ("hola ð\x9f\x91\x8b" for "hola 👋").
ref("live/greeting").set("hola 👋")
check("listen non-ASCII", events.get(timeout=10), ("put", "/greeting", "hola 👋"))
# close() waits for the stream's next event: poke it so the test does not wait for a keep-alive.
threading.Timer(0.3, lambda: ref("live/poke").set(True)).start()
listener.close()

# server values
ref("ts").set({".sv": "timestamp"})
check("server timestamp", isinstance(ref("ts").get(), int) and ref("ts").get() > 1_600_000_000_000, True)

# delete
ref("t").delete()
check("delete", ref("t").get(), None)

# one database per namespace: another app's databaseURL names another namespace (ns=…)
if mode == "admin":
    other = firebase_admin.initialize_app(
        options={"databaseURL": "https://hearth-other.firebaseio.com", "projectId": "hearth-test"}, name="other")
    ref("ns-probe").set("hearth-test")
    db.reference("ns-probe", app=other).set("hearth-other")
    check("namespaces: own data", ref("ns-probe").get(), "hearth-test")
    check("namespaces: other data", db.reference("ns-probe", app=other).get(), "hearth-other")
print("all ok", flush=True)
