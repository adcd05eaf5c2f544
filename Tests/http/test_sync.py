"""Zones, sync tokens and the other ways into the same store: a web client's sync loop, with
saves made by the CLI and through the mount in between. Run by WebServicesSyncTests:
`python3 test_sync.py TEST...`."""
import json
import os
import subprocess
import sys
import time

from cloudkit_client import call, ckfs, fail, ok, post


def zone_op(kind, name):
    return {"operationType": kind, "zone": {"zoneID": {"zoneName": name}}}


def save(zone, *records, kind="forceReplace"):
    ops = [{"operationType": kind, "record": {"recordType": "Note", "recordName": n, "fields": {"text": {"value": t}}}}
           for n, t in records]
    rs = ok(post("private", "records/modify", {"zoneID": {"zoneName": zone}, "operations": ops}))["records"]
    assert all("serverErrorCode" not in r for r in rs), rs
    return rs


def test_zones():
    """zones/modify, zones/list and zones/lookup, with the errors Apple names."""
    rs = ok(post("private", "zones/modify", {"operations": [zone_op("create", "Work"), zone_op("create", "Home"),
                                                            zone_op("create", "bad name"), zone_op("drop", "Work")]}))["zones"]
    assert rs[0]["zoneID"]["zoneName"] == "Work" and rs[0]["atomic"] is True and rs[0]["syncToken"], rs[0]
    assert rs[2]["serverErrorCode"] == "BAD_REQUEST" and rs[3]["serverErrorCode"] == "BAD_REQUEST", rs
    names = sorted(z["zoneID"]["zoneName"] for z in ok(call("GET", "private", "zones/list"))["zones"])
    assert names == ["Home", "Work", "_defaultZone"], names
    assert sorted(ckfs("zone", "list").split()) == names
    rs = ok(post("private", "zones/lookup", {"zones": [{"zoneName": "Home"}, {"zoneName": "Nope"}]}))["zones"]
    assert rs[0]["zoneID"]["zoneName"] == "Home" and rs[0]["atomic"] is True, rs
    assert rs[1]["serverErrorCode"] == "ZONE_NOT_FOUND" and rs[1]["zoneID"]["zoneName"] == "Nope", rs
    # The public database has only the default zone; deleting the default zone is refused.
    r = ok(post("public", "zones/modify", {"operations": [zone_op("create", "Shop")]}))["zones"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST", r
    r = ok(post("private", "zones/modify", {"operations": [zone_op("delete", "_defaultZone")]}))["zones"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST", r
    # Deleting a zone deletes its records; records/* in a missing zone name it.
    save("Home", ("h1", "one"))
    r = ok(post("private", "zones/modify", {"operations": [zone_op("delete", "Home")]}))["zones"][0]
    assert r == {"zoneID": r["zoneID"], "deleted": True}, r
    r = ok(post("private", "records/lookup", {"zoneID": {"zoneName": "Home"}, "records": [{"recordName": "h1"}]}))["records"][0]
    assert r["serverErrorCode"] in ("ZONE_NOT_FOUND", "NOT_FOUND"), r
    r = ok(post("private", "zones/modify", {"operations": [zone_op("delete", "Home")]}))["zones"][0]
    assert r["serverErrorCode"] == "ZONE_NOT_FOUND", r


def fetch_all(zone, token, limit=None):
    """A sync client's loop: changes/zone until moreComing is false. Returns (records, token, rounds)."""
    got = []
    rounds = 0
    while True:
        entry = {"zoneID": {"zoneName": zone}}
        if token:
            entry["syncToken"] = token
        if limit:
            entry["resultsLimit"] = limit
        z = ok(post("private", "changes/zone", {"zones": [entry]}))["zones"][0]
        assert "serverErrorCode" not in z, z
        got += z["records"]
        token = z["syncToken"]
        rounds += 1
        if not z["moreComing"]:
            return got, token, rounds


def test_sync_loop():
    """A sync token sees exactly what changed after it, from every interface, each record once
    in its latest state; moreComing pages the changes; database tokens name changed zones."""
    ok(post("private", "zones/modify", {"operations": [zone_op("create", "Work"), zone_op("create", "Home")]}))
    save("Work", ("a", "1"), ("b", "1"), ("c", "1"))
    records, token, _ = fetch_all("Work", None)
    assert sorted(r["recordName"] for r in records) == ["a", "b", "c"], records
    db = ok(post("private", "changes/database", {}))
    assert {z["zoneID"]["zoneName"] for z in db["zones"]} >= {"Work", "Home"}, db
    db_token = db["syncToken"]
    assert ok(post("private", "changes/database", {"syncToken": db_token}))["zones"] == []

    # Changes by the web, by the CLI, and deletions.
    save("Work", ("a", "2"))
    save("Work", ("a", "3"))
    ckfs("record", "save", "--zone", "Work",
         input=json.dumps({"recordType": "Note", "recordName": "d", "fields": {"text": "from the CLI"}}))
    ok(post("private", "records/modify", {"zoneID": {"zoneName": "Work"}, "operations": [
        {"operationType": "forceDelete", "record": {"recordName": "b"}}]}))
    records, token2, _ = fetch_all("Work", token)
    by_name = {r["recordName"]: r for r in records}
    assert sorted(by_name) == ["a", "b", "d"], records
    assert by_name["a"]["fields"]["text"]["value"] == "3", by_name["a"]
    assert by_name["b"]["deleted"] is True and by_name["d"]["fields"]["text"]["value"] == "from the CLI", records
    assert fetch_all("Work", token2)[0] == [], "nothing after the newest token"

    # The database token names Work (changed), not Home (untouched).
    db = ok(post("private", "changes/database", {"syncToken": db_token}))
    assert [z["zoneID"]["zoneName"] for z in db["zones"]] == ["Work"] and db["moreComing"] is False, db

    # Paging: 25 changes in pages of 4, each record once. (A page ends between saves: one
    # operation's records come in one page.)
    for i in range(25):
        save("Work", (f"p{i:02d}", "x"))
    records, _, rounds = fetch_all("Work", token2, limit=4)
    names = [r["recordName"] for r in records]
    assert sorted(names) == [f"p{i:02d}" for i in range(25)] and len(set(names)) == 25, names
    assert rounds >= 6, rounds

    # records/changes (deprecated) and zones/changes answer the same.
    old = ok(post("private", "records/changes", {"zoneID": {"zoneName": "Work"}, "syncToken": token2}))
    assert len(old["records"]) == 25 and old["moreComing"] is False and old["reverse"] is False, old.keys()
    zc = ok(post("private", "zones/changes", {"metaSyncToken": db_token}))
    assert [z["zoneID"]["zoneName"] for z in zc["zones"]] == ["Work"] and zc["zones"][0]["syncToken"], zc

    # A deleted zone shows as deleted, and its old token no longer works.
    ok(post("private", "zones/modify", {"operations": [zone_op("delete", "Work")]}))
    db = ok(post("private", "changes/database", {"syncToken": db_token}))
    assert db["zones"] == [{"zoneID": db["zones"][0]["zoneID"], "deleted": True}] and db["zones"][0]["zoneID"]["zoneName"] == "Work", db
    ok(post("private", "zones/modify", {"operations": [zone_op("create", "Work")]}))
    z = ok(post("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "Work"}, "syncToken": token2}]}))["zones"][0]
    assert z["serverErrorCode"] == "BAD_REQUEST" and "token" in z["reason"], z
    z = ok(post("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "Gone"}}]}))["zones"][0]
    assert z["serverErrorCode"] == "ZONE_NOT_FOUND", z
    fail(post("private", "changes/database", {"syncToken": "not a token"}), 400, "BAD_REQUEST")


def test_first_fetch_paged():
    """A first fetch (no sync token) pages by resultsLimit like any other: each page at most
    the limit, every record given, and a save made between pages given by the time the loop
    ends, in its newest state; the CLI's changes --limit pages the same way."""
    ok(post("private", "zones/modify", {"operations": [zone_op("create", "Bulk")]}))
    for i in range(0, 30, 10):
        save("Bulk", *[(f"r{j:02d}", "v1") for j in range(i, i + 10)])
    pages, state, token = [], {}, None
    while True:
        entry = {"zoneID": {"zoneName": "Bulk"}, "resultsLimit": 7}
        if token:
            entry["syncToken"] = token
        z = ok(post("private", "changes/zone", {"zones": [entry]}))["zones"][0]
        assert "serverErrorCode" not in z, z
        pages.append([r["recordName"] for r in z["records"]])
        state.update({r["recordName"]: r["fields"]["text"]["value"] for r in z["records"]})
        if len(pages) == 2:  # one record before the cursor changes, one after, one is new
            save("Bulk", ("r01", "v2"), ("r29", "v2"), ("a-new", "v1"))
        token = z["syncToken"]
        if not z["moreComing"]:
            break
    assert all(len(p) <= 7 for p in pages) and len(pages) >= 5, pages
    assert sorted(state) == sorted([f"r{j:02d}" for j in range(30)] + ["a-new"]), sorted(state)
    assert state["r01"] == "v2" and state["r29"] == "v2", state
    z = ok(post("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "Bulk"}, "syncToken": token}]}))["zones"][0]
    assert z["records"] == [] and z["moreComing"] is False, z
    # records/changes, the older endpoint, pages a first fetch too.
    old = ok(post("private", "records/changes", {"zoneID": {"zoneName": "Bulk"}, "resultsLimit": 2}))
    assert len(old["records"]) == 2 and old["moreComing"] is True, old
    # So does the CLI, whose tokens are the same.
    first = json.loads(ckfs("changes", "--zone", "Bulk", "--limit", "5"))
    assert len(first["records"]) == 5 and first["moreComing"] is True, first
    rest = json.loads(ckfs("changes", "--zone", "Bulk", "--since", first["token"]))
    assert len(rest["records"]) == 26 and rest["moreComing"] is False, rest


def test_other_interfaces():
    """A record saved over HTTP is a file in the mount and a record to the CLI, and an edit
    through the mount is what the next lookup and sync token see."""
    mount = os.environ["CKFS_MOUNT"]
    rec = ok(post("public", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Poster", "recordName": "gig", "fields": {"band": {"value": "Mei & the Inks"}}}}]}))["records"][0]
    path = f"{mount}/iCloud.local.ckfs/public/_defaultZone/Poster/gig.json"
    for _ in range(50):  # the mount learns of another process's save from the log
        if os.path.exists(path):
            break
        time.sleep(0.1)
    on_disk = json.loads(subprocess.run(["cat", path], capture_output=True, text=True, check=True).stdout)
    assert on_disk["fields"]["band"]["value"] == "Mei & the Inks" and on_disk["recordChangeTag"] == rec["recordChangeTag"], on_disk
    fetched = json.loads(ckfs("record", "fetch", "gig", "--database", "public"))
    assert fetched["fields"]["band"]["value"] == "Mei & the Inks", fetched

    # Edit the file (as its creator would: the mount acts as the OS user, who is not alice,
    # so it is refused), then through the CLI as alice; HTTP sees the CLI's change.
    on_disk["fields"]["band"]["value"] = "changed by the mount"
    try:
        with open(path, "w") as f:
            json.dump(on_disk, f)
        refused = False
    except OSError:
        refused = True
    assert refused, "the mount's user changed alice's public record"
    after = ok(post("public", "records/lookup", {"records": [{"recordName": "gig"}]}))["records"][0]
    assert after["fields"]["band"]["value"] == "Mei & the Inks", after

    # The mount's own user writes its private notes; alice's web client never sees them.
    os.makedirs(f"{mount}/iCloud.local.ckfs/private/_defaultZone/Note", exist_ok=True)
    with open(f"{mount}/iCloud.local.ckfs/private/_defaultZone/Note/mine.json", "w") as f:
        f.write('{"fields": {"text": "the OS user\'s"}}\n')
    r = ok(post("private", "records/lookup", {"records": [{"recordName": "mine"}]}))["records"][0]
    assert r["serverErrorCode"] == "NOT_FOUND", r

    # Public records the mount's user writes are read over HTTP at once.
    os.makedirs(f"{mount}/iCloud.local.ckfs/public/_defaultZone/Poster", exist_ok=True)
    with open(f"{mount}/iCloud.local.ckfs/public/_defaultZone/Poster/flyer.json", "w") as f:
        f.write('{"fields": {"band": "written through the mount"}}\n')
    r = ok(post("public", "records/lookup", {"records": [{"recordName": "flyer"}]}, web=None))["records"][0]
    assert r["fields"]["band"]["value"] == "written through the mount", r
    # alice may not change it over HTTP: it is the OS user's.
    r = ok(post("public", "records/modify", {"operations": [{"operationType": "forceUpdate", "record": {
        "recordName": "flyer", "fields": {"band": {"value": "alice"}}}}]}))["records"][0]
    assert r["serverErrorCode"] == "ACCESS_DENIED", r


if __name__ == "__main__":
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"{name}: passed")
