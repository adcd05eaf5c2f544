"""Sharing over HTTP: alice shares a list with bob (read-write) and carol (read-only); each
resolves and accepts it by its short GUID and works in the shared database, seeing exactly
what the share grants. Run by WebServicesSharingTests: `python3 test_sharing.py TEST...`."""
import os
import sys

import requests

from cloudkit_client import WEB_TOKEN_BOB, call, ckfs, fail, ok, post


def test_shared_database():
    carol = ckfs("token", "sign-in", user="carol").strip()
    bob = WEB_TOKEN_BOB
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Lists"}}}]}))
    zone = {"zoneName": "Lists"}
    rs = ok(post("private", "records/modify", {"zoneID": zone, "operations": [
        {"operationType": "create", "record": {"recordType": "List", "recordName": "groceries", "fields": {"title": {"value": "Groceries"}}}},
        {"operationType": "create", "record": {"recordType": "Item", "recordName": "milk", "parent": {"recordName": "groceries"},
                                               "fields": {"text": {"value": "milk"}}}},
        {"operationType": "create", "record": {"recordType": "Note", "recordName": "diary", "fields": {"text": {"value": "mine"}}}},
    ]}))["records"]
    assert rs[1]["parent"] == {"recordName": "groceries"}, rs[1]
    me = ok(call("GET", "public", "users/current"))["userRecordName"]
    bob_name = ok(call("GET", "public", "users/current", web=bob))["userRecordName"]
    carol_name = ok(call("GET", "public", "users/current", web=carol))["userRecordName"]

    # The share, as Apple's requests make one: forRecord names the root.
    share = ok(post("private", "records/modify", {"zoneID": zone, "operations": [{"operationType": "create", "record": {
        "recordType": "cloudkit.share", "recordName": "share-1", "forRecord": {"recordName": "groceries"},
        "fields": {"cloudkit.title": {"value": "Groceries"}},
        "participants": [
            {"userIdentity": {"userRecordName": bob_name}, "permission": "READ_WRITE", "type": "USER"},
            {"userIdentity": {"userRecordName": carol_name}, "permission": "READ_ONLY", "type": "USER"}]}}]}))["records"][0]
    assert share["recordType"] == "cloudkit.share" and share["shortGUID"], share
    assert [p["acceptanceStatus"] for p in share["participants"]] == ["ACCEPTED", "INVITED", "INVITED"], share["participants"]
    # Apple's Share Response Keys: the owner, and the caller's own participant.
    assert share["owner"]["userIdentity"]["userRecordName"] == share["currentUserParticipant"]["userIdentity"]["userRecordName"], share
    assert share["owner"]["type"] == "OWNER", share["owner"]
    guid = share["shortGUID"]
    root = ok(post("private", "records/lookup", {"zoneID": zone, "records": [{"recordName": "groceries"}]}))["records"][0]
    assert root["share"] == {"recordName": "share-1"}, root

    shared_zone = {"zoneName": "Lists", "ownerRecordName": me}
    # Before accepting: no zone, and the records are not there.
    assert ok(call("GET", "shared", "zones/list", web=bob))["zones"] == []
    r = ok(post("shared", "records/lookup", {"zoneID": shared_zone, "records": [{"recordName": "milk"}]}, web=bob))["records"][0]
    assert r["serverErrorCode"] == "ZONE_NOT_FOUND", r

    # records/resolve and records/accept, at Apple's public path.
    resolved = ok(post("public", "records/resolve", {"shortGUIDs": [{"value": guid, "shouldFetchRootRecord": True}, {"value": "nosuch"}]}, web=bob))["results"]
    assert resolved[0]["participantPermission"] == "READ_WRITE" and resolved[0]["participantStatus"] == "INVITED", resolved[0]
    assert resolved[0]["rootRecord"]["fields"]["title"]["value"] == "Groceries" and resolved[0]["databaseScope"] == "SHARED", resolved[0]
    assert resolved[1]["serverErrorCode"] == "NOT_FOUND", resolved[1]
    dave = ckfs("token", "sign-in", user="dave").strip()
    refused = ok(post("public", "records/resolve", {"shortGUIDs": [{"value": guid}]}, web=dave))["results"][0]
    assert refused["serverErrorCode"] == "ACCESS_DENIED", refused
    for token in (bob, carol):
        accepted = ok(post("public", "records/accept", {"shortGUIDs": [{"value": guid}]}, web=token))["results"][0]
        assert accepted["participantStatus"] == "ACCEPTED", accepted

    # Each sees the zone, the hierarchy and the share, never the diary.
    for token in (bob, carol):
        zones = ok(call("GET", "shared", "zones/list", web=token))["zones"]
        assert [z["zoneID"] for z in zones] == [shared_zone], zones
        changes = ok(post("shared", "changes/zone", {"zones": [{"zoneID": shared_zone}]}, web=token))["zones"][0]
        assert sorted(r["recordName"] for r in changes["records"]) == ["groceries", "milk", "share-1"], changes
        r = ok(post("shared", "records/lookup", {"zoneID": shared_zone, "records": [{"recordName": "diary"}]}, web=token))["records"][0]
        assert r["serverErrorCode"] == "NOT_FOUND", r
        q = ok(post("shared", "records/query", {"zoneID": shared_zone, "query": {"recordType": "Note"}}, web=token))["records"]
        assert q == [], q
        db = ok(post("shared", "changes/database", {}, web=token))["zones"]
        assert [z["zoneID"] for z in db] == [shared_zone], db

    # Bob adds an item under the list; carol's save is refused, per record.
    eggs = {"recordType": "Item", "recordName": "eggs", "parent": {"recordName": "groceries"}, "fields": {"text": {"value": "eggs"}}}
    saved = ok(post("shared", "records/modify", {"zoneID": shared_zone, "operations": [{"operationType": "create", "record": eggs}]}, web=bob))["records"][0]
    assert saved["recordName"] == "eggs" and "serverErrorCode" not in saved, saved
    cake = dict(eggs, recordName="cake")
    denied = ok(post("shared", "records/modify", {"zoneID": shared_zone, "operations": [{"operationType": "create", "record": cake}]}, web=carol))["records"][0]
    assert denied["serverErrorCode"] == "ACCESS_DENIED", denied
    # A record outside the hierarchy cannot be made either.
    loose = ok(post("shared", "records/modify", {"zoneID": shared_zone, "operations": [{"operationType": "create", "record": {
        "recordType": "Item", "recordName": "loose", "fields": {}}}]}, web=bob))["records"][0]
    assert loose["serverErrorCode"] == "ACCESS_DENIED", loose
    # Bob attaches a photo to his item: each of the three downloads it from the URL their own
    # fetch gives.
    photo = os.urandom(70_000)
    slot = ok(post("shared", "assets/upload", {"zoneID": shared_zone, "tokens": [
        {"recordName": "eggs", "recordType": "Item", "fieldName": "photo"}]}, web=bob))["tokens"][0]
    single = requests.post(slot["url"], data=photo, timeout=30).json()["singleFile"]
    with_photo = ok(post("shared", "records/modify", {"zoneID": shared_zone, "operations": [{"operationType": "update", "record": dict(
        eggs, recordChangeTag=saved["recordChangeTag"], fields={"text": {"value": "eggs"}, "photo": {"value": single}})}]}, web=bob))["records"][0]
    assert "serverErrorCode" not in with_photo, with_photo
    photo_urls = {}
    for token, db, z in ((bob, "shared", shared_zone), (carol, "shared", shared_zone), (None, "private", zone)):
        kw = {"web": token} if token else {}
        got = ok(post(db, "records/lookup", {"zoneID": z, "records": [{"recordName": "eggs"}]}, **kw))["records"][0]
        url = got["fields"]["photo"]["value"]["downloadURL"]
        r = requests.get(url, timeout=30)
        assert r.status_code == 200 and r.content == photo, (db, r.status_code, r.text[:300])
        photo_urls[token] = url
    # Alice has bob's item, made by bob.
    mine = ok(post("private", "records/lookup", {"zoneID": zone, "records": [{"recordName": "eggs"}]}))["records"][0]
    assert mine["created"]["userRecordName"] == bob_name, mine
    # A request naming no owner is told how to name one.
    fail(post("shared", "records/lookup", {"zoneID": {"zoneName": "Lists"}, "records": [{"recordName": "milk"}]}, web=bob), 400, "BAD_REQUEST")

    # Bob's subscriptions of his shared database are his own: a database subscription, no other kind.
    rs = ok(post("shared", "subscriptions/modify", {"operations": [
        {"operationType": "create", "subscription": {"subscriptionID": "shared-changes", "subscriptionType": "database"}},
        {"operationType": "create", "subscription": {"subscriptionID": "zone", "subscriptionType": "zone", "zoneID": shared_zone}}]}, web=bob))["subscriptions"]
    assert rs[0]["subscriptionID"] == "shared-changes" and rs[1]["serverErrorCode"] == "BAD_REQUEST", rs
    assert [x["subscriptionID"] for x in ok(call("GET", "shared", "subscriptions/list", web=bob))["subscriptions"]] == ["shared-changes"]
    assert ok(call("GET", "private", "subscriptions/list"))["subscriptions"] == [], "not in alice's"

    # Carol removed: the zone is gone for her at once.
    ckfs("share", "remove-participant", guid, "carol")
    assert ok(call("GET", "shared", "zones/list", web=carol))["zones"] == []
    assert ok(call("GET", "shared", "zones/list", web=bob))["zones"] != []
    # Her download URL ends with her access; bob's still works.
    assert requests.get(photo_urls[carol], timeout=30).status_code == 404
    assert requests.get(photo_urls[bob], timeout=30).content == photo

    # Alice deletes the share: bob's access ends too, and the root names no share.
    gone = ok(post("private", "records/modify", {"zoneID": zone, "operations": [
        {"operationType": "forceDelete", "record": {"recordName": "share-1"}}]}))["records"][0]
    assert "serverErrorCode" not in gone, gone
    assert ok(call("GET", "shared", "zones/list", web=bob))["zones"] == []
    r = ok(post("shared", "records/lookup", {"zoneID": shared_zone, "records": [{"recordName": "milk"}]}, web=bob))["records"][0]
    assert r["serverErrorCode"] == "ZONE_NOT_FOUND", r
    root = ok(post("private", "records/lookup", {"zoneID": zone, "records": [{"recordName": "groceries"}]}))["records"][0]
    assert "share" not in root, root


if __name__ == "__main__":
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"{name}: passed")
