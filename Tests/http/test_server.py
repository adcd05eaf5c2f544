"""The server as a process: concurrent clients, malformed requests by the thousand, slow and
huge bodies. Run by WebServicesServerTests: `python3 test_server.py TEST...`; CKFS_SERVER_PID
is the server's pid."""
import json
import os
import random
import socket
import sys
import threading
import time
import urllib.parse

import requests

from cloudkit_client import API_TOKEN, CONTAINER, URL, WEB_TOKEN, base, ok, post

PID = int(os.environ.get("CKFS_SERVER_PID", "0"))


def rss_kib():
    with open(f"/proc/{PID}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def host_port():
    u = urllib.parse.urlparse(URL)
    return u.hostname, u.port


def raw(data, timeout=10):
    """Sends raw bytes on a new connection; returns what came back (possibly nothing)."""
    s = socket.create_connection(host_port(), timeout=timeout)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def query_string():
    return "ckAPIToken=" + API_TOKEN + "&ckWebAuthToken=" + urllib.parse.quote(WEB_TOKEN, safe="")


def still_answers():
    r = ok(post("private", "records/lookup", {"records": [{"recordName": "probe"}]}))
    assert r["records"][0]["serverErrorCode"] == "NOT_FOUND", r


def broken_json(rng):
    """Valid JSON cut or corrupted at a random depth."""
    doc = {"operations": [{"operationType": "create", "record": {"recordType": "T", "recordName": "x",
                                                                  "fields": {"a": {"value": [1, {"b": [2, 3]}]}}}}]}
    text = json.dumps(doc)
    i = rng.randrange(1, len(text))
    kind = rng.randrange(4)
    if kind == 0:
        return text[:i]
    if kind == 1:
        return text[:i] + rng.choice("{}[],:\"\\x") + text[i:]
    if kind == 2:
        return "[" * rng.randrange(1, 5000) + "]" * rng.randrange(0, 5000)
    return text.replace(rng.choice(['"operations"', '"record"', '"fields"', '"value"']), rng.choice(['1', 'null', '[]', '"x"']))


def test_malformed_requests():
    """1,000 malformed requests: random bytes, wrong methods, bad JSON at every depth, wrong
    shapes, huge and endless bodies. The server answers each with an error (or closes the
    connection), keeps answering good requests, and its memory stays bounded."""
    rng = random.Random(27)
    still_answers()
    before = rss_kib()
    path = f"/database/1/{CONTAINER}/development/private/records/modify?{query_string()}"
    statuses = {}
    for i in range(1000):
        kind = i % 10
        if kind == 0:  # random bytes instead of HTTP
            raw(os.urandom(rng.randrange(1, 4000)), timeout=3)
            continue
        if kind == 1:  # wrong methods and unknown paths
            method = rng.choice(["PUT", "DELETE", "PATCH", "GET", "OPTIONS"])
            r = requests.request(method, URL + path, data="{}", timeout=10)
        elif kind == 2:  # random bytes as a body
            r = requests.post(URL + path, data=os.urandom(rng.randrange(0, 3000)), timeout=10)
        elif kind in (3, 4, 5):  # broken JSON
            r = requests.post(URL + path, data=broken_json(rng).encode(), timeout=10)
        elif kind == 6:  # JSON of the wrong shape at every level
            doc = rng.choice([[], 1, "x", None, {"operations": "x"}, {"operations": [1]}, {"operations": [{"operationType": 5}]},
                              {"operations": [{"operationType": "create", "record": []}]},
                              {"operations": [{"operationType": "create", "record": {"recordType": 1}}]},
                              {"operations": [{"operationType": "create", "record": {"recordType": "T", "fields": {"a": {"value": {"x": 1}}}}}]},
                              {"operations": [{"operationType": "update", "record": {"recordName": None}}]},
                              {"zoneID": 5, "operations": []}])
            r = requests.post(URL + path, data=json.dumps(doc), timeout=10)
        elif kind == 7:  # a huge body, refused by its Content-Length before it is read
            head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {10**12}\r\n\r\n").encode()
            reply = raw(head + b"{" * 1000, timeout=5)
            assert reply.startswith(b"HTTP/1.1 413"), reply[:100]
            continue
        elif kind == 8:  # a chunked body that grows past the limit
            def chunks():
                for _ in range(40):
                    yield b"[" * 4096
            r = requests.post(URL + path, data=chunks(), timeout=20)
            assert r.status_code == 413, r.status_code
        else:  # unknown keys and values deep inside
            r = requests.post(URL + path, data=json.dumps({"operations": [{"operationType": "create", "record": {
                "recordType": "T", "recordName": f"r{i}", "x": {"y": [rng.random()]}}}], "extra": [[[[]]]]}), timeout=10)
        statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
        assert r.status_code < 500, (r.status_code, r.text[:300])
        if r.status_code != 200:
            body = r.json() if r.headers.get("content-type", "").startswith("application/json") else None
            assert body is None or (body["serverErrorCode"] and body["reason"]), r.text[:300]
    still_answers()
    after = rss_kib()
    print(f"statuses {sorted(statuses.items())}; RSS {before} KiB before, {after} KiB after")
    assert after - before < 64 * 1024, f"RSS grew from {before} to {after} KiB"


def test_slow_and_endless_bodies():
    """A body that never ends is refused after the body time-out, and meanwhile the server
    serves others."""
    s = socket.create_connection(host_port(), timeout=30)
    path = f"/database/1/{CONTAINER}/development/private/records/modify?{query_string()}"
    s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{{\"oper".encode())
    started = time.monotonic()
    still_answers()  # served while the slow client waits
    reply = s.recv(65536)
    waited = time.monotonic() - started
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert waited < 10, waited
    s.close()


def test_concurrent_clients():
    """Eight clients save and read at once; every acknowledged save is there, once."""
    errors = []
    saved = []
    lock = threading.Lock()

    def client(n):
        try:
            session = requests.Session()
            for i in range(25):
                name = f"c{n}-{i}"
                r = session.post(f"{base()}/private/records/modify", params={"ckAPIToken": API_TOKEN, "ckWebAuthToken": WEB_TOKEN},
                                 json={"operations": [{"operationType": "create", "record": {"recordType": "Item", "recordName": name,
                                                                                             "fields": {"n": {"value": i}}}}]}, timeout=30)
                rec = r.json()["records"][0]
                assert r.status_code == 200 and "serverErrorCode" not in rec, r.text
                with lock:
                    saved.append(name)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    names = []
    marker = None
    while True:
        body = {"query": {"recordType": "Item"}, "resultsLimit": 200}
        if marker:
            body["continuationMarker"] = marker
        res = ok(post("private", "records/query", body))
        names += [r["recordName"] for r in res["records"]]
        marker = res.get("continuationMarker")
        if not marker:
            break
    assert sorted(names) == sorted(saved) and len(saved) == 200, (len(names), len(saved))


def writers():
    """Four clients save records until the server goes away; each acknowledged save is printed
    (its name and value) the moment its 200 arrives. For the kill -9 test."""
    out_lock = threading.Lock()

    def client(n):
        session = requests.Session()
        i = 0
        while True:
            name = f"w{n}-{i}"
            try:
                r = session.post(f"{base()}/private/records/modify", params={"ckAPIToken": API_TOKEN, "ckWebAuthToken": WEB_TOKEN},
                                 json={"operations": [{"operationType": "forceReplace", "record": {
                                     "recordType": "Item", "recordName": name, "fields": {"v": {"value": i * 7}}}}]}, timeout=10)
                rec = r.json()["records"][0]
            except Exception:  # noqa: BLE001 - the server is gone: stop
                return
            if r.status_code == 200 and "serverErrorCode" not in rec:
                with out_lock:
                    sys.stdout.write(f"{name} {i * 7}\n")
                    sys.stdout.flush()
            i += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


if __name__ == "__main__":
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"{name}: passed")
