"""Writer locks on S3 (moto's server, no JVM): two driver processes that share no disk take one lock object
in the bucket; one gets it, the other fails naming the holder or waits for it; a lease whose holder died is
taken over (at once when it was a process of this machine, after its ttl otherwise); a held lease outlives
its ttl because it is renewed; a store that refuses the lock gets an error that says what to grant."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from dagster_streamt.spark.errors import ModelRunError
from dagster_streamt.spark.storage.locks import FileLock, LockBusy
from dagster_streamt.spark.storage.object_lock import ObjectLock, lock_at, s3_client
from dagster_streamt.spark.storage.paths import ProjectPaths
from dagster_streamt.spark.storage.store import ObjectPath, StoreOptions

from ..helpers import S3_BUCKET, s3_conf

# a second driver: another process, as another machine would be (it shares only the bucket)
DRIVER = textwrap.dedent("""
    import sys, time
    from dagster_streamt.spark.storage.object_lock import ObjectLock
    from dagster_streamt.spark.storage.locks import LockBusy
    from dagster_streamt.spark.storage.store import ObjectPath, StoreOptions
    conf = {"spark.hadoop.fs.s3a.endpoint": sys.argv[1], "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.access.key": "test", "spark.hadoop.fs.s3a.secret.key": "test"}
    path = ObjectPath(sys.argv[2], StoreOptions.from_spark_conf(conf))
    try:
        with ObjectLock(path, busy_message="busy", wait=sys.argv[3] == "wait"):
            print("took", flush=True)
            time.sleep(float(sys.argv[4]))
    except LockBusy as exc:
        print("busy:", exc, flush=True)
""")


@pytest.fixture
def lock_path(s3_endpoint: str, request: pytest.FixtureRequest) -> Iterator[ObjectPath]:
    path = ObjectPath(f"s3a://{S3_BUCKET}/locks-test/{request.node.name}", StoreOptions.from_spark_conf(
        s3_conf(s3_endpoint)))
    yield path
    path.unlink(missing_ok=True)


def _driver(endpoint: str, path: ObjectPath, wait: bool, hold_s: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", DRIVER, endpoint, path.uri, "wait" if wait else "fail", str(hold_s)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _lease(path: ObjectPath) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def test_of_two_drivers_at_once_one_takes_the_lock_and_the_other_fails_naming_it(
        s3_endpoint: str, lock_path: ObjectPath) -> None:
    drivers = [_driver(s3_endpoint, lock_path, wait=False, hold_s=3) for _ in range(2)]
    outs = sorted(d.communicate(timeout=60)[0].strip() for d in drivers)
    assert outs[0].startswith("busy: busy (lock s3a://lake/locks-test/") and " held by pid " in outs[0], outs
    assert outs[1] == "took", outs
    assert not lock_path.exists()  # released


def test_a_waiting_driver_takes_the_lock_once_it_is_released(s3_endpoint: str, lock_path: ObjectPath) -> None:
    with ObjectLock(lock_path):
        holder = _lease(lock_path)
        waiter = _driver(s3_endpoint, lock_path, wait=True, hold_s=0)
        time.sleep(2.0)
        assert waiter.poll() is None  # still waiting: the lease is held
        with pytest.raises(LockBusy, match=f"held by pid {holder['pid']} on "), \
                ObjectLock(lock_path, busy_message="stream model x is already running"):
            pass
    assert waiter.communicate(timeout=60)[0].strip() == "took"


def test_a_dead_local_holder_is_taken_over_at_once_a_foreign_one_after_its_ttl(lock_path: ObjectPath) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = {"host": socket.gethostname(), "pid": int(dead.stdout), "since": "then", "token": "x"}
    lock_path.write_text(json.dumps(stale))  # what a driver killed with kill -9 leaves
    started = time.monotonic()
    with ObjectLock(lock_path, ttl_s=600):
        assert time.monotonic() - started < 5  # not the ttl
        assert _lease(lock_path)["pid"] != stale["pid"]

    lock_path.write_text(json.dumps({**stale, "host": "another-machine", "pid": 1}))
    with pytest.raises(LockBusy, match="held by pid 1 on another-machine"), ObjectLock(lock_path, ttl_s=600):
        pass
    time.sleep(2.5)  # by the store's clock (whole seconds), the lease is now older than a 1 s ttl
    with ObjectLock(lock_path, ttl_s=1.0):
        assert _lease(lock_path)["host"] != "another-machine"


def test_a_held_lease_is_renewed_past_its_ttl(lock_path: ObjectPath) -> None:
    with ObjectLock(lock_path, ttl_s=1.5) as held:
        time.sleep(4.0)
        with pytest.raises(LockBusy), ObjectLock(lock_path, ttl_s=1.5):  # renewed every ttl/3: never stale
            pass
        assert not held.lost


def test_threads_of_one_process_exclude_each_other(lock_path: ObjectPath) -> None:
    inside: list[int] = []
    overlap: list[bool] = []

    def work(n: int) -> None:
        with ObjectLock(lock_path, wait=True):
            inside.append(n)
            overlap.append(len(inside) > 1)
            time.sleep(0.3)
            inside.remove(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert overlap == [False, False, False]


def test_where_the_locks_are(s3_endpoint: str, tmp_path: Any) -> None:
    from dagster_streamt.spark.storage.warehouse import Warehouse

    store = StoreOptions.from_spark_conf(s3_conf(s3_endpoint))
    wh = Warehouse(ObjectPath(f"s3a://{S3_BUCKET}/wh", store), tmp_path / "locks")
    lock = wh.lock("orders")
    assert isinstance(lock, ObjectLock) and lock.path.uri == f"s3a://{S3_BUCKET}/wh/_locks/orders" and lock.wait
    assert isinstance(Warehouse(tmp_path / "wh").lock("orders"), FileLock)
    gcs = Warehouse(ObjectPath("gs://b/wh"), tmp_path / "locks").lock("orders")
    assert isinstance(gcs, FileLock) and gcs.path == tmp_path / "locks" / "orders.lock"
    paths = ProjectPaths(root=tmp_path, warehouse=ObjectPath(f"s3a://{S3_BUCKET}/wh", store),
                         checkpoints=ObjectPath(f"s3a://{S3_BUCKET}/cp", store))
    assert str(paths.checkpoint_lock("orders_clean")) == f"s3a://{S3_BUCKET}/cp/_locks/orders_clean"
    assert isinstance(lock_at(paths.checkpoint_lock("orders_clean")), ObjectLock)


def test_a_store_that_refuses_the_lock_says_what_to_grant(s3_endpoint: str) -> None:
    missing = ObjectPath("s3a://no-such-bucket/wh/_locks/orders", StoreOptions.from_spark_conf(s3_conf(s3_endpoint)))
    refused = r"could not create the writer lock s3a://no-such-bucket/wh/_locks/orders: NoSuchBucket.*s3:PutObject"
    with pytest.raises(ModelRunError, match=refused + r".*conditional writes"), ObjectLock(missing, model="orders"):
        pass
    assert s3_client(missing.options, "no-such-bucket") is s3_client(missing.options, "no-such-bucket")  # one client


def test_a_run_whose_lease_was_taken_over_fails_and_leaves_the_new_holder_alone(lock_path: ObjectPath) -> None:
    """A holder paused past its ttl loses the lease to another driver: its next renewal finds the object
    changed, and leaving the lock fails the run (S3 cannot fence its Delta commits) without deleting the
    other driver's lease."""
    other = {"host": "another-machine", "pid": 1, "since": "now", "token": "theirs"}
    taken_over = pytest.raises(ModelRunError, match="taken over by another driver while this run held it")
    with taken_over, ObjectLock(lock_path, ttl_s=1.5, model="orders_clean") as held:
        lock_path.write_text(json.dumps(other))  # what the other driver's takeover leaves (delete, then create)
        deadline = time.monotonic() + 10
        while not held.lost and time.monotonic() < deadline:  # the next renewal (every ttl/3) finds it
            time.sleep(0.1)
        assert held.lost
    assert _lease(lock_path) == other

    lock_path.unlink()
    own_error = pytest.raises(RuntimeError, match="the model's own error")  # an error of the run itself stands
    with own_error, ObjectLock(lock_path, ttl_s=1.5) as held:
        lock_path.write_text(json.dumps(other))
        deadline = time.monotonic() + 10
        while not held.lost and time.monotonic() < deadline:
            time.sleep(0.1)
        raise RuntimeError("the model's own error")
