"""Assets both ways (upload, save with the receipt, download, rereference) and user discovery
over `ckfs serve`. Run by WebServicesAssetsAndUsersTests: `python3 test_assets_users.py TEST...`."""
import hashlib
import json
import os
import sys
import time

import requests

from cloudkit_client import STORE, WEB_TOKEN_BOB, call, ckfs, fail, ok, post


def upload(data, db="private", record="photo1", field="image", zone=None, web=None):
    body = {"tokens": [{"recordName": record, "recordType": "Photo", "fieldName": field}]}
    if zone:
        body["zoneID"] = {"zoneName": zone}
    kw = {"web": web} if web else {}
    token = ok(post(db, "assets/upload", body, **kw))["tokens"][0]
    assert token["recordName"] == record and token["fieldName"] == field and token["url"].startswith("http"), token
    # As Apple's example: the raw bytes POSTed to the URL, no credentials.
    r = requests.post(token["url"], data=data, timeout=30)
    assert r.status_code == 200, r.text
    return token["url"], r.json()["singleFile"]


def test_assets():
    data = os.urandom(300_000) + b"\x00\n\r" * 10
    url, single = upload(data)
    assert single["size"] == len(data) and single["fileChecksum"] == hashlib.sha256(data).hexdigest() and single["receipt"], single
    # An upload URL takes one upload.
    r = requests.post(url, data=b"again", timeout=10)
    assert r.status_code == 404 and r.json()["serverErrorCode"] == "NOT_FOUND", r.text

    # Save the record with the singleFile dictionary as the value, untyped, as Apple's example does.
    saved = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "photo1", "fields": {"image": {"value": single}, "title": {"value": "sea"}}}}]}))["records"][0]
    assert saved["fields"]["image"]["type"] == "ASSETID", saved
    value = saved["fields"]["image"]["value"]
    assert value["fileChecksum"] == single["fileChecksum"] and value["size"] == len(data) and value["downloadURL"], value
    # The bytes come back from the download URL, and are in the store's content-addressed assets.
    got = requests.get(value["downloadURL"], timeout=30)
    assert got.status_code == 200 and got.content == data, (got.status_code, len(got.content))
    assert requests.get(value["downloadURL"] + "/photo.jpg", timeout=30).content == data, "a file name after the URL"
    found = [os.path.join(d, f) for d, _, fs in os.walk(STORE) for f in fs if f == single["fileChecksum"]]
    assert found and open(found[0], "rb").read() == data, found
    fetched = json.loads(ckfs("record", "fetch", "photo1"))
    assert fetched["fields"]["image"]["value"]["fileChecksum"] == single["fileChecksum"], fetched
    looked = ok(post("private", "records/lookup", {"records": [{"recordName": "photo1"}]}))["records"][0]
    assert requests.get(looked["fields"]["image"]["value"]["downloadURL"], timeout=30).content == data

    # A tampered download URL is refused.
    bad = value["downloadURL"][:-3] + ("AAA" if not value["downloadURL"].endswith("AAA") else "BBB")
    assert requests.get(bad, timeout=10).status_code == 404

    # A receipt is its uploader's: bob cannot use alice's.
    _, single2 = upload(b"second file")
    r = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "stolen", "fields": {"image": {"value": single2}}}}]}, web=WEB_TOKEN_BOB))["records"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST" and "receipt" in r["reason"], r
    r = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "fake", "fields": {"image": {"value": {"receipt": "nope", "size": 1, "fileChecksum": "x"}}}}}]}))["records"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST", r

    # A path on the server is no asset value: a client cannot have the server copy its files.
    for value in ({"path": STORE + "/iCloud.local.ckfs/container.json"}, [{"path": "/etc/passwd"}]):
        typ = "ASSETID_LIST" if isinstance(value, list) else "ASSETID"
        r = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
            "recordType": "Photo", "recordName": "theft", "fields": {"image": {"value": value, "type": typ}}}}]}))["records"][0]
        assert r["serverErrorCode"] == "BAD_REQUEST" and "assets/upload" in r["reason"], r
    # rereference: the same asset in a record of another zone.
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Album"}}}]}))
    ref = ok(post("private", "assets/rereference", {"assets": [{"recordName": "photo1", "fieldName": "image"},
                                                               {"recordName": "photo1", "fieldName": "title"},
                                                               {"recordName": "nobody", "fieldName": "image"}]}))["assets"]
    assert ref[0]["fileChecksum"] == single["fileChecksum"] and ref[0]["receipt"], ref
    assert ref[1]["serverErrorCode"] == "BAD_REQUEST" and ref[2]["serverErrorCode"] == "NOT_FOUND", ref
    copy = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Album"}, "operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "copy", "fields": {"image": {"value": ref[0], "type": "ASSETID"}}}}]}))["records"][0]
    assert requests.get(copy["fields"]["image"]["value"]["downloadURL"], timeout=30).content == data
    # A list of assets.
    _, a = upload(b"a", record="many")
    _, b = upload(b"b", record="many")
    many = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "many", "fields": {"images": {"value": [a, b], "type": "ASSETID_LIST"}}}}]}))["records"][0]
    urls = [v["downloadURL"] for v in many["fields"]["images"]["value"]]
    assert [requests.get(u, timeout=10).content for u in urls] == [b"a", b"b"], many
    # rereference of a list: one receipt per asset, in order, usable in another record.
    refs = ok(post("private", "assets/rereference", {"assets": [{"recordName": "many", "fieldName": "images"}]}))["assets"]
    assert [r["fileChecksum"] for r in refs] == [hashlib.sha256(b"a").hexdigest(), hashlib.sha256(b"b").hexdigest()], refs
    again = ok(post("private", "records/modify", {"zoneID": {"zoneName": "Album"}, "operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "many-copy", "fields": {"images": {"value": refs, "type": "ASSETID_LIST"}}}}]}))["records"][0]
    assert [requests.get(v["downloadURL"], timeout=10).content for v in again["fields"]["images"]["value"]] == [b"a", b"b"], again


def test_users():
    """Discovery over HTTP follows ckfs's rules: only users who granted it, among contacts."""
    ckfs("user", "update", "alice", "--email", "alice@example.com", user=None)
    ckfs("user", "update", "bob", "--contact", "alice@example.com", user=None)
    alice = ok(call("GET", "public", "users/current"))["userRecordName"]
    # Before alice grants discoverability, nobody finds her.
    assert ok(call("GET", "public", "users/discover", web=WEB_TOKEN_BOB))["users"] == []
    ckfs("permission", "request", "discoverability", "--grant")
    found = ok(call("GET", "public", "users/discover", web=WEB_TOKEN_BOB))["users"]
    assert [u["userRecordName"] for u in found] == [alice], found
    assert found[0]["lookupInfo"]["emailAddress"] == "alice@example.com" and found[0]["nameComponents"]["givenName"] == "alice", found
    found = ok(post("public", "users/discover", {"lookupInfos": [{"emailAddress": "alice@example.com"}, {"emailAddress": "nobody@example.com"},
                                                                  {"userRecordName": alice}, {"phoneNumber": "+4712345678"}]}, web=WEB_TOKEN_BOB))["users"]
    assert [u["userRecordName"] for u in found] == [alice, alice], found
    byemail = ok(post("public", "users/lookup/email", {"users": [{"emailAddress": "alice@example.com"}]}, web=WEB_TOKEN_BOB))["users"]
    assert byemail == [{"userRecordName": alice, "firstName": "alice", "lastName": None, "emailAddress": "alice@example.com"}], byemail
    byid = ok(post("public", "users/lookup/id", {"users": [{"userRecordName": alice}, {"userRecordName": "_0"}]}, web=WEB_TOKEN_BOB))["users"]
    assert [u["userRecordName"] for u in byid] == [alice], byid
    contacts = ok(post("public", "users/lookup/contacts", {}, web=WEB_TOKEN_BOB))["users"]
    assert [u["userRecordName"] for u in contacts] == [alice], contacts
    fail(post("public", "users/discover", {"lookupInfos": [{}]}, web=WEB_TOKEN_BOB), 400, "BAD_REQUEST")
    fail(call("GET", "public", "users/discover", web=None), 421, "AUTHENTICATION_REQUIRED")


def test_asset_quota_and_uploads():
    """Run with `ckfs init --private-quota 3000000` and `serve --upload-lifetime 2`, staging in
    CKFS_STAGING. An asset named by a checksum the zone lacks is refused; of eight 1 MB uploads
    saved one by one, two fit and six are refused (at the upload, which counts toward the quota,
    or at the save), and neither the zone nor the staging folder keeps their files; an upload
    no save takes is gone when its receipt expires, and the receipt with it."""
    staging = os.environ["CKFS_STAGING"]

    def staged():
        return [f for _, _, fs in os.walk(staging) for f in fs]

    def zone_assets():
        return [f for d, _, fs in os.walk(STORE) if d.endswith("/assets") for f in fs if not f.startswith(".")]

    never = {"fileChecksum": hashlib.sha256(b"never uploaded").hexdigest(), "size": 14}
    r = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "fake", "fields": {"image": {"value": never}}}}]}))["records"][0]
    assert r["serverErrorCode"] == "BAD_REQUEST" and "does not hold" in r["reason"], r

    saved = refused = 0
    for i in range(8):
        token = ok(post("private", "assets/upload", {"tokens": [{"recordName": f"p{i}", "fieldName": "image"}]}))["tokens"][0]
        r = requests.post(token["url"], data=os.urandom(1_000_000), timeout=30)
        if r.status_code != 200:
            assert r.status_code == 413 and r.json()["serverErrorCode"] == "QUOTA_EXCEEDED", r.text
            refused += 1
            continue
        rec = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
            "recordType": "Photo", "recordName": f"p{i}", "fields": {"image": {"value": r.json()["singleFile"]}}}}]}))["records"][0]
        if "serverErrorCode" in rec:
            assert rec["serverErrorCode"] == "QUOTA_EXCEEDED", rec
            refused += 1
        else:
            saved += 1
    assert (saved, refused) == (2, 6), (saved, refused)
    assert len(zone_assets()) == 2, zone_assets()
    assert staged() == [], staged()

    # Room for one small upload, which no save takes.
    ok(post("private", "records/modify", {"operations": [{"operationType": "forceDelete", "record": {"recordName": "p0"}}]}))
    token = ok(post("private", "assets/upload", {"tokens": [{"recordName": "late", "fieldName": "image"}]}))["tokens"][0]
    r = requests.post(token["url"], data=b"never saved", timeout=30)
    assert r.status_code == 200 and len(staged()) == 1, (r.text, staged())
    time.sleep(4)
    assert staged() == [], staged()
    rec = ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Photo", "recordName": "late", "fields": {"image": {"value": r.json()["singleFile"]}}}}]}))["records"][0]
    assert rec["serverErrorCode"] == "BAD_REQUEST" and "expired" in rec["reason"], rec


if __name__ == "__main__":
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"{name}: passed")
