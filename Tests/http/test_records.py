"""records/modify, records/lookup and records/query against `ckfs serve`, as a web client
drives them. Run by WebServicesTests: `python3 test_records.py TEST...`."""
import json
import math
import random
import sys

from cloudkit_client import call, ckfs, fail, ok, post


def create(name, fields, db="private", zone=None, record_type="Artist"):
    body = {"operations": [{"operationType": "create",
                            "record": {"recordType": record_type, "recordName": name, "fields": fields}}]}
    if zone:
        body["zoneID"] = {"zoneName": zone}
    rec = ok(post(db, "records/modify", body), f"create {name}")["records"][0]
    assert "serverErrorCode" not in rec, rec
    return rec


def op(kind, record, **extra):
    return {"operationType": kind, "record": record, **extra}


def test_operation_types():
    """Each of the seven operation types does what Apple's page says, tag checks included."""
    mei = create("mei", {"name": {"value": "Mei"}, "city": {"value": "Oslo"}})
    assert mei["recordChangeTag"] and mei["created"]["userRecordName"].startswith("_"), mei
    assert mei["fields"]["name"] == {"value": "Mei", "type": "STRING"}, mei
    assert mei["zoneID"]["zoneName"] == "_defaultZone" and mei["zoneID"]["ownerRecordName"].startswith("_"), mei

    # update: only the fields given change; no recordType needed.
    r = ok(post("private", "records/modify", {"operations": [op("update", {
        "recordName": "mei", "recordChangeTag": mei["recordChangeTag"], "fields": {"age": {"value": 41}}})]}))["records"][0]
    assert r["fields"]["name"]["value"] == "Mei" and r["fields"]["age"] == {"value": 41, "type": "INT64"}, r
    assert r["recordChangeTag"] != mei["recordChangeTag"]
    # update with the old tag: CONFLICT, and nothing changes.
    stale = ok(post("private", "records/modify", {"operations": [op("update", {
        "recordName": "mei", "recordChangeTag": mei["recordChangeTag"], "fields": {"age": {"value": 1}}})]}))["records"][0]
    assert stale["serverErrorCode"] == "CONFLICT" and stale["recordName"] == "mei", stale
    # update without a tag: refused, naming the fix.
    untagged = ok(post("private", "records/modify", {"operations": [op("update", {
        "recordName": "mei", "fields": {"age": {"value": 1}}})]}))["records"][0]
    assert untagged["serverErrorCode"] == "BAD_REQUEST" and "forceUpdate" in untagged["reason"], untagged
    # replace: fields not given are removed.
    r = ok(post("private", "records/modify", {"operations": [op("replace", {
        "recordType": "Artist", "recordName": "mei", "recordChangeTag": r["recordChangeTag"],
        "fields": {"name": {"value": "Mei Chen"}}})]}))["records"][0]
    assert set(r["fields"]) == {"name"} and r["fields"]["name"]["value"] == "Mei Chen", r
    # forceUpdate: no tag, merges; creates a missing record of the given type.
    r2 = ok(post("private", "records/modify", {"operations": [
        op("forceUpdate", {"recordName": "mei", "fields": {"city": {"value": "Bergen"}}}),
        op("forceUpdate", {"recordType": "Artist", "recordName": "kai", "fields": {"name": {"value": "Kai"}}}),
    ]}))["records"]
    assert set(r2[0]["fields"]) == {"name", "city"}, r2[0]
    assert r2[1]["recordName"] == "kai" and r2[1]["fields"]["name"]["value"] == "Kai", r2[1]
    # forceReplace: no tag, the given fields are all there is.
    r3 = ok(post("private", "records/modify", {"operations": [op("forceReplace", {
        "recordType": "Artist", "recordName": "mei", "fields": {"city": {"value": "Tromsø"}}})]}))["records"][0]
    assert set(r3["fields"]) == {"city"} and r3["fields"]["city"]["value"] == "Tromsø", r3
    # create of a name that exists: CONFLICT; of a missing name in update: NOT_FOUND.
    dup = ok(post("private", "records/modify", {"operations": [op("create", {
        "recordType": "Artist", "recordName": "mei", "fields": {}})]}))["records"][0]
    assert dup["serverErrorCode"] == "CONFLICT", dup
    missing = ok(post("private", "records/modify", {"operations": [op("update", {
        "recordName": "nobody", "recordChangeTag": "1", "fields": {}})]}))["records"][0]
    assert missing["serverErrorCode"] == "NOT_FOUND", missing
    # delete with a stale tag: CONFLICT; with the right one: deleted; forceDelete: no tag.
    bad = ok(post("private", "records/modify", {"operations": [op("delete", {
        "recordName": "mei", "recordChangeTag": mei["recordChangeTag"]})]}))["records"][0]
    assert bad["serverErrorCode"] == "CONFLICT", bad
    gone = ok(post("private", "records/modify", {"operations": [op("delete", {
        "recordName": "mei", "recordChangeTag": r3["recordChangeTag"]})]}))["records"][0]
    assert gone == {"recordName": "mei", "deleted": True, "zoneID": gone["zoneID"]}, gone
    gone = ok(post("private", "records/modify", {"operations": [op("forceDelete", {"recordName": "kai"})]}))["records"][0]
    assert gone["deleted"] is True, gone
    again = ok(post("private", "records/modify", {"operations": [op("forceDelete", {"recordName": "kai"})]}))["records"][0]
    assert again["serverErrorCode"] == "NOT_FOUND", again
    # A create without a name gets a UUID name.
    r = ok(post("private", "records/modify", {"operations": [op("create", {"recordType": "Artist", "fields": {}})]}))["records"][0]
    assert len(r["recordName"]) >= 32, r
    # An unknown operation type is that operation's error, not the request's.
    r = ok(post("private", "records/modify", {"operations": [op("upsert", {"recordType": "Artist", "recordName": "x"})]}))["records"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST" and "operationType" in r["reason"], r


def test_atomic_batches():
    """In a custom zone a batch is all or nothing (ATOMIC_ERROR for the rest); in the default
    zone, and with atomic false, each operation stands alone."""
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Work"}}}]}))
    create("a", {"n": {"value": 1}}, zone="Work")
    batch = [op("create", {"recordType": "Artist", "recordName": "b", "fields": {"n": {"value": 2}}}),
             op("create", {"recordType": "Artist", "recordName": "a", "fields": {}}),  # exists: fails
             op("forceUpdate", {"recordType": "Artist", "recordName": "c", "fields": {"n": {"value": 3}}})]
    rs = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Work"}, "operations": batch}))["records"]
    assert [r.get("serverErrorCode") for r in rs] == ["ATOMIC_ERROR", "CONFLICT", "ATOMIC_ERROR"], rs
    names = {r["recordName"] for r in ok(post("private", "records/query", {
        "zoneID": {"zoneName": "Work"}, "query": {"recordType": "Artist"}}))["records"]}
    assert names == {"a"}, names
    # A bad operation read before any save also fails the atomic batch.
    rs = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Work"}, "operations": [
        batch[0], op("update", {"recordName": "a", "fields": {}})]}))["records"]
    assert [r.get("serverErrorCode") for r in rs] == ["ATOMIC_ERROR", "BAD_REQUEST"], rs
    # atomic: false in the custom zone: the good ones are saved.
    rs = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Work"}, "atomic": False, "operations": batch}))["records"]
    assert [r.get("serverErrorCode") for r in rs] == [None, "CONFLICT", None], rs
    # The default zone is never atomic, as at Apple.
    create("a", {}, db="private")
    rs = ok(post("private", "records/modify", {"operations": batch}))["records"]
    assert [r.get("serverErrorCode") for r in rs] == [None, "CONFLICT", None], rs
    # Atomicity is per zone: one request with operations in Work and in the default zone.
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Home"}}}]}))
    mixed = [op("create", {"recordType": "Artist", "recordName": "w1", "fields": {}, "zoneID": {"zoneName": "Work"}}),
             op("create", {"recordType": "Artist", "recordName": "a", "fields": {}, "zoneID": {"zoneName": "Work"}}),  # exists
             op("create", {"recordType": "Artist", "recordName": "d1", "fields": {}}),
             op("create", {"recordType": "Artist", "recordName": "h1", "fields": {}, "zoneID": {"zoneName": "Home"}})]
    rs = ok(post("private", "records/modify", {"operations": mixed}))["records"]
    assert [r.get("serverErrorCode") for r in rs] == ["ATOMIC_ERROR", "CONFLICT", None, None], rs
    assert rs[0]["zoneID"]["zoneName"] == "Work" and rs[3]["zoneID"]["zoneName"] == "Home", rs
    # The public database neither.
    create("p1", {}, db="public")
    rs = ok(post("public", "records/modify", {"atomic": True, "operations": [
        op("create", {"recordType": "Artist", "recordName": "p2", "fields": {}}),
        op("create", {"recordType": "Artist", "recordName": "p1", "fields": {}})]}))["records"]
    assert [r.get("serverErrorCode") for r in rs] == [None, "CONFLICT"], rs


def test_limits_and_bad_requests():
    """200 operations at most; bodies that are not the documented shape are whole-request errors."""
    ops = [op("create", {"recordType": "Item", "recordName": f"i{i}", "fields": {}}) for i in range(201)]
    fail(post("private", "records/modify", {"operations": ops}), 400, "BAD_REQUEST", "201 operations")
    rs = ok(post("private", "records/modify", {"operations": ops[:200]}))["records"]
    assert len(rs) == 200 and all("serverErrorCode" not in r for r in rs), rs[:2]
    fail(post("private", "records/modify", {"operations": []}), 400, "BAD_REQUEST", "no operations")
    fail(post("private", "records/modify", {"operations": {"a": 1}}), 400, "BAD_REQUEST", "operations not a list")
    fail(post("private", "records/modify", None, raw=b"[1,2]"), 400, "BAD_REQUEST", "array body")
    fail(post("private", "records/modify", None, raw=b'{"operations": [}'), 400, "BAD_REQUEST", "broken JSON")
    fail(post("private", "records/lookup", {"records": [{"name": "x"}]}), 400, "BAD_REQUEST", "no recordName")
    # A field whose value does not fit its type is that record's error.
    r = ok(post("private", "records/modify", {"operations": [op("create", {
        "recordType": "Item", "recordName": "bad", "fields": {"n": {"value": "x", "type": "INT64"}}})]}))["records"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST" and "INT64" in r["reason"], r
    # Keys a newer client sends are ignored.
    r = ok(post("private", "records/modify", {"operations": [op("create", {
        "recordType": "Item", "recordName": "newer", "createShortGUID": True, "fields": {}})], "someNewKey": 1}))["records"][0]
    assert r["recordName"] == "newer" and "serverErrorCode" not in r, r


def test_lookup_and_numbers():
    """Lookup in order with NOT_FOUND in place; desiredKeys; INT64 beyond 2^53 survives, as a
    string with numbersAsStrings."""
    big = 2**53 + 1
    create("n1", {"big": {"value": big, "type": "INT64"}, "pi": {"value": 3.25}, "name": {"value": "one"},
                  "when": {"value": 1714000000000, "type": "TIMESTAMP"}, "tags": {"value": ["a", "b"]},
                  "blob": {"value": "AAEC", "type": "BYTES"},
                  "where": {"value": {"latitude": 59.9, "longitude": 10.7}, "type": "LOCATION"},
                  "friend": {"value": {"recordName": "n2", "action": "NONE"}, "type": "REFERENCE"}})
    rs = ok(post("private", "records/lookup", {"records": [{"recordName": "n1"}, {"recordName": "zz"}, {"recordName": "n1", "desiredKeys": ["pi"]}]}))["records"]
    assert rs[0]["fields"]["big"] == {"value": big, "type": "INT64"}, rs[0]
    assert rs[0]["fields"]["when"]["type"] == "TIMESTAMP" and rs[0]["fields"]["tags"]["type"] == "STRING_LIST"
    assert rs[0]["fields"]["where"]["value"]["latitude"] == 59.9 and rs[0]["fields"]["blob"]["value"] == "AAEC", rs[0]
    assert rs[1]["serverErrorCode"] == "NOT_FOUND" and rs[1]["recordName"] == "zz", rs[1]
    assert set(rs[2]["fields"]) == {"pi"}, rs[2]
    r = ok(post("private", "records/lookup", {"records": [{"recordName": "n1"}], "desiredKeys": [], "numbersAsStrings": True}))["records"][0]
    assert r["fields"] == {} and r["recordChangeTag"], r
    r = ok(post("private", "records/lookup", {"records": [{"recordName": "n1"}], "numbersAsStrings": True}))["records"][0]
    assert r["fields"]["big"]["value"] == str(big) and r["fields"]["pi"]["value"] == "3.25", r
    assert r["fields"]["name"]["value"] == "one", r
    # The CLI reads what the web wrote, byte for byte in the number.
    fetched = json.loads(ckfs("record", "fetch", "n1"))
    assert fetched["fields"]["big"]["value"] == big, fetched


def test_dates_in_fractional_milliseconds():
    """A client that counts milliseconds in a double (Python's time.time() * 1000) sends a
    fraction: responses give whole milliseconds, as Apple's, with no other key; the store keeps
    the fraction (the CLI shows it), and a query for that very date finds the record."""
    sent = 1714000000123.25
    rec = create("t1", {"when": {"value": sent, "type": "TIMESTAMP"},
                        "whens": {"value": [5, sent], "type": "TIMESTAMP_LIST"}})
    for r in [rec, ok(post("private", "records/lookup", {"records": [{"recordName": "t1"}]}))["records"][0]]:
        assert r["fields"]["when"] == {"value": 1714000000123, "type": "TIMESTAMP"}, r
        assert type(r["fields"]["when"]["value"]) is int, r
        assert r["fields"]["whens"] == {"value": [5, 1714000000123], "type": "TIMESTAMP_LIST"}, r
    stored = json.loads(ckfs("record", "fetch", "t1"))["fields"]
    assert stored["when"] == {"value": 1714000000123, "fraction": 0.25, "type": "TIMESTAMP"}, stored
    assert stored["whens"]["fraction"] == [0, 0.25], stored

    def names(value):
        q = {"query": {"recordType": "Artist", "filterBy": [
            {"fieldName": "when", "comparator": "EQUALS", "fieldValue": {"value": value, "type": "TIMESTAMP"}}]}}
        return [r["recordName"] for r in ok(post("private", "records/query", q))["records"]]
    assert names(sent) == ["t1"]
    assert names(1714000000123) == [], "the date is 0.25 ms past that millisecond"


def test_item_error_codes():
    """The per-record codes that need a particular store: a DELETE_SELF reference to nothing, a
    record past 1 MB, a save past the quota."""
    r = ok(post("private", "records/modify", {"operations": [op("create", {"recordType": "Note", "recordName": "child", "fields": {
        "owner": {"type": "REFERENCE", "value": {"recordName": "ghost", "action": "DELETE_SELF"}}}})]}))["records"][0]
    assert r["serverErrorCode"] == "VALIDATING_REFERENCE_ERROR" and "ghost" in r["reason"], r
    r = ok(post("private", "records/modify", {"operations": [op("create", {"recordType": "Note", "recordName": "huge", "fields": {
        "text": {"value": "x" * (1024 * 1024 + 1)}}})]}))["records"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST" and "bytes" in r["reason"], r
    ckfs("init", "--private-quota", "4000", user=None)
    r = ok(post("private", "records/modify", {"operations": [op("create", {"recordType": "Note", "recordName": "big", "fields": {
        "text": {"value": "x" * 5000}}})]}))["records"][0]
    assert r["serverErrorCode"] == "QUOTA_EXCEEDED", r
    r = ok(post("private", "records/modify", {"operations": [op("create", {"recordType": "Note", "recordName": "small", "fields": {
        "text": {"value": "fits"}}})]}))["records"][0]
    assert "serverErrorCode" not in r, r


def brute_force(records, test):
    return sorted(r["recordName"] for r in records if test(r["fields"]))


def test_query_comparators():
    """Every comparator against a brute-force filter of the same records."""
    random.seed(7)
    words = ["red", "green", "blue", "amber", "violet"]
    saved = []
    ops = []
    for i in range(60):
        fields = {"n": {"value": i % 13, "type": "INT64"}, "x": {"value": i / 4, "type": "DOUBLE"},
                  "name": {"value": f"{random.choice(words)} item {i:02d}"},
                  "tags": {"value": random.sample(words, 2), "type": "STRING_LIST"},
                  "at": {"value": {"latitude": 59 + i / 100, "longitude": 10.0}, "type": "LOCATION"}}
        if i % 10 == 0:
            del fields["n"]
        ops.append(op("create", {"recordType": "Thing", "recordName": f"t{i:02d}", "fields": fields}))
        saved.append({"recordName": f"t{i:02d}", "fields": {k: v["value"] for k, v in fields.items()}})
    ok(post("private", "records/modify", {"operations": ops}))

    def query(filters, sort=None):
        names = []
        marker = None
        while True:
            body = {"query": {"recordType": "Thing", "filterBy": filters}, "resultsLimit": 200}
            if sort:
                body["query"]["sortBy"] = sort
            if marker:
                body["continuationMarker"] = marker
            res = ok(post("private", "records/query", body), json.dumps(filters))
            names += [r["recordName"] for r in res["records"]]
            marker = res.get("continuationMarker")
            if not marker:
                return sorted(names)

    def f(comparator, field, value, typ=None, **extra):
        fv = {"value": value}
        if typ:
            fv["type"] = typ
        return {"comparator": comparator, "fieldName": field, "fieldValue": fv, **extra}

    cases = [
        ([f("EQUALS", "n", 5)], lambda r: r.get("n") == 5),
        ([f("NOT_EQUALS", "n", 5)], lambda r: "n" in r and r["n"] != 5),
        ([f("LESS_THAN", "n", 4)], lambda r: "n" in r and r["n"] < 4),
        ([f("LESS_THAN_OR_EQUALS", "x", 3.5)], lambda r: r["x"] <= 3.5),
        ([f("GREATER_THAN", "x", 12)], lambda r: r["x"] > 12),
        ([f("GREATER_THAN_OR_EQUALS", "n", 11)], lambda r: "n" in r and r["n"] >= 11),
        ([f("IN", "n", [1, 2, 3], "INT64_LIST")], lambda r: r.get("n") in (1, 2, 3)),
        ([f("NOT_IN", "n", [1, 2, 3], "INT64_LIST"), f("GREATER_THAN", "x", -1)], lambda r: r.get("n") not in (1, 2, 3)),
        ([f("BEGINS_WITH", "name", "blue")], lambda r: r["name"].startswith("blue")),
        ([f("NOT_BEGINS_WITH", "name", "blue")], lambda r: not r["name"].startswith("blue")),
        # Token searches cover every string field (CloudKit's allTokens), ignoring case.
        ([f("CONTAINS_ALL_TOKENS", "name", "AMBER item")], lambda r: "amber" in r["name"].split() + r["tags"]),
        ([f("CONTAINS_ANY_TOKENS", "name", "amber violet")], lambda r: {"amber", "violet"} & set(r["name"].split() + r["tags"])),
        ([f("CONTAINS_ALL_TOKENS", "name", "Item 07")], lambda r: r["name"].endswith("item 07")),
        ([f("LIST_CONTAINS", "tags", "red")], lambda r: "red" in r["tags"]),
        ([f("NOT_LIST_CONTAINS", "tags", "red")], lambda r: "red" not in r["tags"]),
        ([f("LIST_CONTAINS_ALL", "tags", ["red", "blue"], "STRING_LIST")], lambda r: {"red", "blue"} <= set(r["tags"])),
        ([f("NOT_LIST_CONTAINS_ALL", "tags", ["red", "blue"], "STRING_LIST")], lambda r: not {"red", "blue"} <= set(r["tags"])),
        ([f("NOT_LIST_CONTAINS_ANY", "tags", ["red", "blue"], "STRING_LIST")], lambda r: not {"red", "blue"} & set(r["tags"])),
        ([f("LIST_MEMBER_BEGINS_WITH", "tags", "vio")], lambda r: any(t.startswith("vio") for t in r["tags"])),
        ([f("NEAR", "at", {"latitude": 59.2, "longitude": 10.0}, "LOCATION", distance=5600)],
         lambda r: abs(r["at"]["latitude"] - 59.2) * 111195 < 5600),
        ([f("EQUALS", "n", 7), f("LESS_THAN", "x", 10)], lambda r: r.get("n") == 7 and r["x"] < 10),
        ([{"comparator": "EQUALS", "systemFieldName": "recordName", "fieldValue": {"value": {"recordName": "t07"}, "type": "REFERENCE"}}],
         lambda r: False),
    ]
    for filters, test in cases[:-1]:
        got = query(filters)
        want = brute_force(saved, test)
        assert got == want, f"{json.dumps(filters)}: got {got}, want {want}"
        assert want, f"{json.dumps(filters)} matches nothing: a weak case"
    assert query(cases[-1][0]) == ["t07"]
    # Sorted by a field, descending, with ties broken the same way every time.
    res = ok(post("private", "records/query", {"query": {"recordType": "Thing", "sortBy": [{"fieldName": "x", "ascending": False}]}, "resultsLimit": 5}))
    assert [r["fields"]["x"]["value"] for r in res["records"]] == [59 / 4, 58 / 4, 57 / 4, 56 / 4, 55 / 4], res["records"]
    # Unknown field, unknown comparator, unknown type: whole-request errors that say so.
    for filters in ([f("EQUALS", "nope", 1)], [f("SIMILAR", "n", 1)]):
        fail(post("private", "records/query", {"query": {"recordType": "Thing", "filterBy": filters}}), 400, "BAD_REQUEST")
    fail(post("private", "records/query", {"query": {"recordType": "NoSuchType"}}), 404, "NOT_FOUND")


def test_query_paging():
    """resultsLimit and continuationMarker walk every record once, in order, and a save between
    pages neither repeats nor skips one."""
    ops = [op("create", {"recordType": "Page", "recordName": f"p{i:03d}", "fields": {"k": {"value": i % 9}}}) for i in range(95)]
    ok(post("private", "records/modify", {"operations": ops}))
    seen = []
    marker = None
    pages = 0
    while True:
        body = {"query": {"recordType": "Page", "sortBy": [{"fieldName": "k"}]}, "resultsLimit": 7}
        if marker:
            body["continuationMarker"] = marker
        res = ok(post("private", "records/query", body))
        assert len(res["records"]) <= 7
        seen += [(r["fields"]["k"]["value"], r["recordName"]) for r in res["records"]]
        pages += 1
        if pages == 3:  # a record sorted before the cursor appears meanwhile
            ok(post("private", "records/modify", {"operations": [op("create", {"recordType": "Page", "recordName": "p000a", "fields": {"k": {"value": 0}}})]}))
        marker = res.get("continuationMarker")
        if not marker:
            break
    names = [n for _, n in seen]
    assert len(names) == len(set(names)) == 95, (len(names), len(set(names)))
    assert seen == sorted(seen), "pages out of order"
    assert pages == 14, pages
    # A limit past Apple's 200 is taken as 200.
    res = ok(post("private", "records/query", {"query": {"recordType": "Page"}, "resultsLimit": 500}))
    assert len(res["records"]) == 96 and "continuationMarker" not in res, len(res["records"])


def haversine(a, b):
    """Great-circle metres between two {latitude, longitude} dictionaries (mean Earth radius)."""
    p1, p2 = math.radians(a["latitude"]), math.radians(b["latitude"])
    dp, dl = p2 - p1, math.radians(b["longitude"] - a["longitude"])
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371008.8 * math.asin(min(1, math.sqrt(h)))


def test_query_sort_by_distance():
    """A sort with relativeLocation orders by distance from the point, nearest first or last,
    pages without repeats or gaps (a record saved between pages included), keeps records with
    no location last, and agrees with the CLI's KEY@LAT,LON sort."""
    random.seed(11)
    here = {"latitude": 48.8566, "longitude": 2.3522}
    places = {}
    ops = []
    for i in range(40):
        fields = {"n": {"value": i}}
        if i % 8 != 3:
            places[f"c{i:02d}"] = {"latitude": random.uniform(-60, 70), "longitude": random.uniform(-170, 170)}
            fields["at"] = {"value": places[f"c{i:02d}"], "type": "LOCATION"}
        ops.append(op("create", {"recordType": "City", "recordName": f"c{i:02d}", "fields": fields}))
    ok(post("private", "records/modify", {"operations": ops}))

    def walk(ascending, limit, extra=None, point=here):
        got, marker, pages = [], None, 0
        while True:
            body = {"query": {"recordType": "City", "sortBy": [{"fieldName": "at", "relativeLocation": point, "ascending": ascending}]},
                    "resultsLimit": limit}
            if marker:
                body["continuationMarker"] = marker
            res = ok(post("private", "records/query", body))
            got += [r["recordName"] for r in res["records"]]
            pages += 1
            if pages == 2 and extra:
                ok(post("private", "records/modify", {"operations": [extra]}))
            marker = res.get("continuationMarker")
            if not marker:
                return got

    nearest = sorted(places, key=lambda n: haversine(places[n], here))
    unplaced = sorted(n for n in (f"c{i:02d}" for i in range(40)) if n not in places)
    assert walk(True, 200) == nearest + unplaced
    assert walk(False, 200) == nearest[::-1] + unplaced
    # The point as Apple's reference writes it, a LOCATION field dictionary, with or without its type.
    assert walk(True, 200, point={"value": here, "type": "LOCATION"}) == nearest + unplaced
    assert walk(True, 200, point={"value": here}) == nearest + unplaced
    # Paged 6 at a time, with a record nearer than any page yet given saved after page two:
    # it comes neither twice nor in place of another (it sorts before the cursor, so it is not
    # given at all).
    near = op("create", {"recordType": "City", "recordName": "z-near", "fields": {"at": {"value": here, "type": "LOCATION"}}})
    paged = walk(True, 6, near)
    assert paged == nearest + unplaced, paged
    # The CLI's distance sort is the same order.
    out = json.loads(ckfs("record", "query", "--type", "City", "--sort", "at@48.8566,2.3522", "--limit", "200"))
    assert [r["recordName"] for r in out["records"]] == ["z-near"] + nearest + unplaced
    # Only a location field sorts by distance; the point must be a location.
    fail(post("private", "records/query", {"query": {"recordType": "City", "sortBy": [{"fieldName": "n", "relativeLocation": here}]}}),
         400, "BAD_REQUEST")
    fail(post("private", "records/query", {"query": {"recordType": "City", "sortBy": [{"fieldName": "at", "relativeLocation": "Paris"}]}}),
         400, "BAD_REQUEST")
    wrong = fail(post("private", "records/query", {"query": {"recordType": "City", "sortBy": [
        {"fieldName": "at", "relativeLocation": {"value": here, "type": "STRING"}}]}}), 400, "BAD_REQUEST", "a STRING point")
    assert "LOCATION" in wrong["reason"], wrong


def test_zone_wide_query():
    """zoneWide without a zoneID searches every zone: sorted across zones, ties by zone then
    name, paged with saves in several zones between pages and no repeats or gaps; a zoneID
    given wins over zoneWide; the default is the default zone alone."""
    zones = ["Alpha", "Beta", "Gamma"]
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": z}}} for z in zones]}))
    want = []
    for zi, zone in enumerate(["_defaultZone"] + zones):
        ops = [op("create", {"recordType": "Spread", "recordName": f"s{i:02d}", "fields": {"k": {"value": (i * 7 + zi) % 5}}})
               for i in range(12)]
        ok(post("private", "records/modify", {"zoneID": {"zoneName": zone}, "operations": ops}))
        want += [((i * 7 + zi) % 5, zone, f"s{i:02d}") for i in range(12)]

    def walk(limit, sort, later=()):
        got, marker, pages = [], None, 0
        while True:
            body = {"zoneWide": True, "query": {"recordType": "Spread", "sortBy": sort}, "resultsLimit": limit}
            if marker:
                body["continuationMarker"] = marker
            res = ok(post("private", "records/query", body))
            got += [(r["fields"]["k"]["value"], r["zoneID"]["zoneName"], r["recordName"]) for r in res["records"]]
            pages += 1
            if pages == 2:
                for zone, name, k in later:
                    ok(post("private", "records/modify", {"zoneID": {"zoneName": zone}, "operations": [
                        op("create", {"recordType": "Spread", "recordName": name, "fields": {"k": {"value": k}}})]}))
            marker = res.get("continuationMarker")
            if not marker:
                return got, pages

    got, _ = walk(200, [{"fieldName": "k"}])
    assert got == sorted(want), got
    got, _ = walk(200, [])
    assert got == sorted(want, key=lambda t: (t[1], t[2])), got
    # Paged 5 at a time; meanwhile a record lands before the cursor (k 0 in Alpha) and two after
    # it (k 4 in the default zone and in Gamma): the first is not given, the others are, once.
    later = [("Alpha", "t-early", 0), ("_defaultZone", "t-late", 4), ("Gamma", "t-late", 4)]
    got, pages = walk(5, [{"fieldName": "k", "ascending": True}], later)
    expected = sorted(want + [(4, "_defaultZone", "t-late"), (4, "Gamma", "t-late")])
    assert got == expected, got
    assert pages == (len(expected) + 4) // 5, pages
    # A zoneID wins over zoneWide; without zoneWide the default zone alone is searched.
    only = ok(post("private", "records/query", {"zoneWide": True, "zoneID": {"zoneName": "Beta"}, "query": {"recordType": "Spread"}}))
    assert {r["zoneID"]["zoneName"] for r in only["records"]} == {"Beta"}, only
    plain = ok(post("private", "records/query", {"query": {"recordType": "Spread"}}))
    assert {r["zoneID"]["zoneName"] for r in plain["records"]} == {"_defaultZone"}, plain
    # A marker of a one-zone query is refused by a zone-wide one, and the other way round.
    one = ok(post("private", "records/query", {"query": {"recordType": "Spread"}, "resultsLimit": 2}))["continuationMarker"]
    fail(post("private", "records/query", {"zoneWide": True, "query": {"recordType": "Spread"}, "continuationMarker": one}), 400, "BAD_REQUEST")
    wide = ok(post("private", "records/query", {"zoneWide": True, "query": {"recordType": "Spread"}, "resultsLimit": 2}))["continuationMarker"]
    fail(post("private", "records/query", {"query": {"recordType": "Spread"}, "continuationMarker": wide}), 400, "BAD_REQUEST")


def test_encrypted_fields():
    """Apple's `isEncrypted` flag: a field saved with it is echoed with it (the plain type
    name beside it), stays encrypted through updates, cannot be written without it, is never
    queried or sorted by, and the public database refuses it."""
    phone = {"value": "+33 1 23 45 67 89", "type": "STRING", "isEncrypted": True}
    rec = create("ada", {"name": {"value": "Ada"}, "phone": phone,
                         "ranks": {"value": [3, 1], "type": "INT64_LIST", "isEncrypted": True}}, record_type="Contact")
    assert rec["fields"]["phone"] == phone, rec
    assert rec["fields"]["ranks"] == {"value": [3, 1], "type": "INT64_LIST", "isEncrypted": True}, rec
    assert "isEncrypted" not in rec["fields"]["name"], rec
    got = ok(post("private", "records/lookup", {"records": [{"recordName": "ada"}]}))["records"][0]
    assert got["fields"]["phone"] == phone, got
    # An update of another field leaves the encrypted one as it was.
    r = ok(post("private", "records/modify", {"operations": [op("update", {
        "recordName": "ada", "recordChangeTag": got["recordChangeTag"], "fields": {"name": {"value": "Ada L."}}})]}))["records"][0]
    assert r["fields"]["phone"] == phone and r["fields"]["name"]["value"] == "Ada L.", r
    # Written without the flag, the field's type does not match the schema's.
    plain = ok(post("private", "records/modify", {"operations": [op("forceUpdate", {
        "recordName": "ada", "recordType": "Contact", "fields": {"phone": {"value": "+1 555"}}})]}))["records"][0]
    assert plain["serverErrorCode"] == "BAD_REQUEST" and "ENCRYPTED_STRING" in plain["reason"], plain
    # Never queried or sorted by.
    by_phone = {"recordType": "Contact", "filterBy": [
        {"comparator": "EQUALS", "fieldName": "phone", "fieldValue": {"value": "+33 1 23 45 67 89"}}]}
    body = fail(post("private", "records/query", {"query": by_phone}), 400, "BAD_REQUEST", "filter on an encrypted field")
    assert "phone" in body["reason"], body
    fail(post("private", "records/query", {"query": {"recordType": "Contact", "sortBy": [{"fieldName": "phone"}]}}),
         400, "BAD_REQUEST", "sort by an encrypted field")
    by_name = ok(post("private", "records/query", {"query": {"recordType": "Contact", "filterBy": [
        {"comparator": "EQUALS", "fieldName": "name", "fieldValue": {"value": "Ada L."}}]}}))
    assert [r["recordName"] for r in by_name["records"]] == ["ada"], by_name
    # The public database has no encrypted fields.
    pub = ok(post("public", "records/modify", {"operations": [op("create", {
        "recordType": "Contact", "recordName": "pub", "fields": {"phone": phone}})]}))["records"][0]
    assert pub["serverErrorCode"] == "BAD_REQUEST" and "public database" in pub["reason"], pub


def test_untyped_fields():
    """Field values without "type", as MistKit (which never sends it) and CloudKit JS send them:
    typed from the schema where the record type has the field, else from the value's shape; a
    value that contradicts the schema is refused, naming the field and the type."""
    typed = {"where": {"value": {"latitude": 48.85, "longitude": 2.35}, "type": "LOCATION"},
             "ref": {"value": {"recordName": "p0", "action": "NONE"}, "type": "REFERENCE"},
             "blob": {"value": "AQID", "type": "BYTES"},
             "when": {"value": 1700000000000, "type": "TIMESTAMP"},
             "ratio": {"value": 1.5, "type": "DOUBLE"},
             "places": {"value": [{"latitude": 1.0, "longitude": 2.0}], "type": "LOCATION_LIST"}}
    create("p1", typed, record_type="Place")
    untyped = {"where": {"value": {"latitude": 40.7, "longitude": -74.0}},
               "ref": {"value": {"recordName": "p1", "action": "NONE"}},
               "blob": {"value": "BAUG"},
               "when": {"value": 1700000000000.5},
               "ratio": {"value": 3},
               "places": {"value": [{"latitude": 3.0, "longitude": 4.0}]}}
    r = create("p2", untyped, record_type="Place")
    got = {k: v["type"] for k, v in r["fields"].items()}
    assert got == {"where": "LOCATION", "ref": "REFERENCE", "blob": "BYTES", "when": "TIMESTAMP", "ratio": "DOUBLE",
                   "places": "LOCATION_LIST"}, r
    assert r["fields"]["blob"]["value"] == "BAUG" and r["fields"]["ratio"]["value"] == 3, r
    assert r["fields"]["where"]["value"]["latitude"] == 40.7 and r["fields"]["ref"]["value"]["recordName"] == "p1", r
    # A type the schema does not have yet: the value's shape says.
    r = create("s1", {"at": {"value": {"latitude": 1.5, "longitude": 2.5, "horizontalAccuracy": 5}},
                      "to": {"value": {"recordName": "p1"}},
                      "stops": {"value": [{"latitude": 1, "longitude": 2}, {"latitude": 3, "longitude": 4}]},
                      "links": {"value": [{"recordName": "p1"}, {"recordName": "p2", "action": "NONE"}]}},
               record_type="Spot")
    got = {k: v["type"] for k, v in r["fields"].items()}
    assert got == {"at": "LOCATION", "to": "REFERENCE", "stops": "LOCATION_LIST", "links": "REFERENCE_LIST"}, r
    # What contradicts the schema, or has no shape of its own, is refused with what to send.
    bad = ok(post("private", "records/modify", {"operations": [op("create", {
        "recordType": "Place", "recordName": "p3", "fields": {"where": {"value": "Paris"}}})]}))["records"][0]
    assert bad["serverErrorCode"] == "BAD_REQUEST" and "where" in bad["reason"] and "LOCATION" in bad["reason"], bad
    bad = ok(post("private", "records/modify", {"operations": [op("create", {
        "recordType": "Spot", "recordName": "s2", "fields": {"odd": {"value": {"colour": "red"}}}})]}))["records"][0]
    assert bad["serverErrorCode"] == "BAD_REQUEST" and "odd" in bad["reason"] and "location" in bad["reason"], bad
    # The CLI takes the same shorthand.
    out = json.loads(ckfs("record", "save", input=json.dumps({"recordType": "Spot", "recordName": "s3", "fields": {
        "at": {"latitude": 5, "longitude": 6}, "to": {"recordName": "p1"}}})))
    assert out["fields"]["at"]["type"] == "LOCATION" and out["fields"]["to"]["type"] == "REFERENCE", out


def test_schema_changed_elsewhere():
    """The server reads the schema again when another process changed it: the first request
    after the change is answered as the new schema says, never refused on the old one."""
    create("t1", {"n": {"value": 1}}, record_type="Thing")
    # The CLI adds a DOUBLE field; an untyped integer for it is that DOUBLE at once.
    ckfs("record", "save", input=json.dumps({"recordType": "Thing", "recordName": "t2", "fields": {"ratio": {"value": 2.5, "type": "DOUBLE"}}}))
    r = create("t3", {"ratio": {"value": 3}}, record_type="Thing")
    assert r["fields"]["ratio"] == {"value": 3.0, "type": "DOUBLE"} or r["fields"]["ratio"] == {"value": 3, "type": "DOUBLE"}, r
    # A type deployed by the CLI is saved in production at the first try.
    ckfs("record", "save", input=json.dumps({"recordType": "Fresh", "recordName": "f1", "fields": {"x": {"value": 1}}}))
    ckfs("schema", "deploy")
    r = ok(post("private", "records/modify", {"operations": [op("create", {"recordType": "Fresh", "recordName": "f2",
                                                                           "fields": {"x": {"value": 2}}})]}, env="production"))["records"][0]
    assert "serverErrorCode" not in r and r["fields"]["x"]["type"] == "INT64", r
    # An index taken away by the CLI refuses the next query that needs it.
    ok(post("private", "records/query", {"query": {"recordType": "Thing", "filterBy": [
        {"comparator": "EQUALS", "fieldName": "n", "fieldValue": {"value": 1}}]}}))
    ckfs("schema", "index", "remove", "Thing", "n", "queryable")
    fail(post("private", "records/query", {"query": {"recordType": "Thing", "filterBy": [
        {"comparator": "EQUALS", "fieldName": "n", "fieldValue": {"value": 1}}]}}), 400, "BAD_REQUEST", "after the index went")


def test_apple_request_shapes():
    """Request shapes from Apple's pages and clients, each answered as Apple documents: Booleans
    and whole doubles for INT64, the share type spelled cloudKit.share, desiredKeys inside the
    record, zones/lookup with one zone dictionary, the zone dictionaries of changes/database,
    users/current's name, reverse refused by name, and an unknown endpoint's error dictionary."""
    r = create("b1", {"done": {"value": True}, "count": {"value": 5.0, "type": "INT64"}, "flags": {"value": [True, False]}},
               record_type="Task")
    assert r["fields"]["done"] == {"value": 1, "type": "INT64"} and r["fields"]["count"] == {"value": 5, "type": "INT64"}, r
    assert r["fields"]["flags"] == {"value": [1, 0], "type": "INT64_LIST"}, r
    found = ok(post("private", "records/query", {"query": {"recordType": "Task", "filterBy": [
        {"comparator": "EQUALS", "fieldName": "done", "fieldValue": {"value": True}}]}}))["records"]
    assert [x["recordName"] for x in found] == ["b1"], found
    # A share of a zone, as Apple's example names its type.
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Shop"}}}]}))
    share = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Shop"}, "operations": [op("create", {
        "recordType": "cloudKit.share", "recordName": "cloudkit.zoneshare", "fields": {}, "publicPermission": "NONE",
        "participants": []})]}))["records"][0]
    assert "serverErrorCode" not in share and share["recordType"] == "cloudkit.share", share
    shares = ok(post("private", "records/query", {"zoneID": {"zoneName": "Shop"}, "query": {"recordType": "cloudKit.share"}}))["records"]
    assert [x["recordName"] for x in shares] == ["cloudkit.zoneshare"], shares
    # desiredKeys inside the record dictionary, as Apple's asset example writes it.
    r = ok(post("private", "records/modify", {"operations": [op("create", {
        "recordType": "Task", "recordName": "b2", "fields": {"done": {"value": 0}, "note": {"value": "x"}}, "desiredKeys": ["note"]})]}))["records"][0]
    assert set(r.get("fields", {})) == {"note"}, r
    # zones/lookup with one zone dictionary.
    z = ok(post("private", "zones/lookup", {"zones": {"zoneName": "Shop"}}))["zones"]
    assert [x["zoneID"]["zoneName"] for x in z] == ["Shop"], z
    # changes/database gives zone dictionaries.
    zones = ok(post("private", "changes/database", {}))["zones"]
    shop = [x for x in zones if x["zoneID"]["zoneName"] == "Shop"][0]
    assert shop.get("syncToken") and "atomic" in shop, shop
    # users/current names the user.
    me = ok(call("GET", "private", "users/current"))
    assert me["firstName"] == "alice", me
    # reverse is refused by name, for that zone alone.
    rev = ok(post("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "Shop"}, "reverse": True}]}))["zones"][0]
    assert rev["serverErrorCode"] == "BAD_REQUEST" and "reverse" in rev["reason"], rev
    # desiredRecordTypes leaves out the deletions of other types too.
    token = ok(post("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "Shop"}}]}))["zones"][0]["syncToken"]
    made = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Shop"}, "operations": [
        op("create", {"recordType": "Task", "recordName": "t9", "fields": {}}), op("create", {"recordType": "Note", "recordName": "n9", "fields": {}})]}))
    ok(post("private", "records/modify", {"zoneID": {"zoneName": "Shop"}, "operations": [
        op("forceDelete", {"recordName": "t9"}), op("forceDelete", {"recordName": "n9"})]}))
    got = ok(post("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "Shop"}, "syncToken": token, "desiredRecordTypes": ["Task"]}]}))
    assert [(x["recordName"], x.get("deleted")) for x in got["zones"][0]["records"]] == [("t9", True)], (made, got)
    # A zone dictionary of changes/zone takes its own numbersAsStrings.
    ok(post("private", "records/modify", {"zoneID": {"zoneName": "Shop"}, "operations": [
        op("create", {"recordType": "Task", "recordName": "t11", "fields": {"count": {"value": 7}}})]}))
    got = ok(post("private", "changes/zone", {"zones": [{"zoneID": {"zoneName": "Shop"}, "syncToken": token, "numbersAsStrings": True}]}))
    t11 = [x for x in got["zones"][0]["records"] if x["recordName"] == "t11"][0]
    assert t11["fields"]["count"]["value"] == "7", t11
    # The parent and share system fields, and Apple's ___ index names, in filters and sorts.
    ok(post("private", "records/modify", {"operations": [
        op("create", {"recordType": "List", "recordName": "L1", "fields": {}}),
        op("create", {"recordType": "Item", "recordName": "i1", "parent": {"recordName": "L1"}, "fields": {"n": {"value": 1}}}),
        op("create", {"recordType": "Item", "recordName": "i2", "fields": {"n": {"value": 2}}}),
        op("create", {"recordType": "Item", "recordName": "i3", "parent": {"recordName": "L1"}, "fields": {"n": {"value": 3}}})]}))
    for by in ({"systemFieldName": "parent"}, {"fieldName": "___parent"}):
        q = {"recordType": "Item", "filterBy": [dict(by, comparator="EQUALS", fieldValue={"value": {"recordName": "L1"}, "type": "REFERENCE"}),
                                                {"fieldName": "___createTime", "comparator": "GREATER_THAN", "fieldValue": {"value": 0, "type": "TIMESTAMP"}}],
             "sortBy": [{"fieldName": "___recordID", "ascending": False}]}
        got = ok(post("private", "records/query", {"query": q}))["records"]
        assert [x["recordName"] for x in got] == ["i3", "i1"], (by, got)
    shared = ok(post("private", "records/query", {"zoneID": {"zoneName": "Shop"}, "query": {"recordType": "Task", "filterBy": [
        {"systemFieldName": "share", "comparator": "EQUALS", "fieldValue": {"value": {"recordName": "cloudkit.zoneshare"}, "type": "REFERENCE"}}]}}))
    assert shared["records"] == [], shared
    fail(post("private", "records/query", {"query": {"recordType": "Item", "sortBy": [{"systemFieldName": "parent"}]}}), 400, "BAD_REQUEST",
         "a sort by parent")
    # A VALIDATE reference needs its target: in the zone, or saved in the same request.
    ok_ref = create("t12", {"of": {"value": {"recordName": "b1", "action": "VALIDATE"}, "type": "REFERENCE"}}, record_type="Task")
    assert ok_ref["fields"]["of"]["value"]["recordName"] == "b1", ok_ref
    gone = ok(post("private", "records/modify", {"operations": [op("create", {
        "recordType": "Task", "recordName": "t13", "fields": {"of": {"value": {"recordName": "nobody", "action": "VALIDATE"}}}})]}))["records"][0]
    assert gone["serverErrorCode"] == "VALIDATING_REFERENCE_ERROR" and "nobody" in gone["reason"], gone
    both = ok(post("private", "records/modify", {"operations": [
        op("create", {"recordType": "List", "recordName": "L2", "fields": {}}),
        op("create", {"recordType": "Task", "recordName": "t14", "fields": {"ofAll": {"value": [{"recordName": "L2", "action": "VALIDATE"}]}}})]}))["records"]
    assert all("serverErrorCode" not in r for r in both), both
    # A reference names a record of its own zone: one naming another zone is refused.
    bad = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Shop"}, "operations": [op("create", {
        "recordType": "Task", "recordName": "t10", "fields": {"of": {"value": {"recordName": "b1", "zoneID": {"zoneName": "_defaultZone"}},
                                                                      "type": "REFERENCE"}}})]}))["records"][0]
    assert bad["serverErrorCode"] == "BAD_REQUEST" and "zone" in bad["reason"], bad
    # An unknown endpoint answers CloudKit's error dictionary.
    body = fail(post("private", "records/nothing", {}), 404, "NOT_FOUND", "an unknown endpoint")
    assert "records/nothing" in body["reason"], body


if __name__ == "__main__":
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"{name}: passed")
