"""Subscriptions, push tokens and the web courier's long poll, woken by saves from the mount
and the CLI. Run by WebServicesNotificationTests: `python3 test_notifications.py TEST...`."""
import json
import os
import sys
import threading
import time

import requests

from cloudkit_client import API_TOKEN, URL, base, call, ckfs, fail, ok, post


def query_subscription(sid, record_type="Poster", **extra):
    return {"subscriptionID": sid, "subscriptionType": "query", "query": {"recordType": record_type, **extra.pop("query", {})},
            "firesOn": ["create", "update", "delete"], "notificationInfo": {
                "alertBody": "new poster", "shouldBadge": True, "alertLocalizationKey": "POSTER_%@", "alertLocalizationArgs": ["band"],
                "alertActionLocalizationKey": "SEE", "alertLaunchImage": "poster.png"}, **extra}


def test_subscriptions():
    """subscriptions/modify, list and lookup, as the CLI sees them too."""
    # A record type must exist before a query on it.
    ok(post("private", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Poster", "recordName": "p0", "fields": {"band": {"value": "x"}, "year": {"value": 1999}}}}]}))
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Work"}}}]}))
    rs = ok(post("private", "subscriptions/modify", {"operations": [
        {"operationType": "create", "subscription": query_subscription("posters", query={
            "filterBy": [{"fieldName": "band", "comparator": "BEGINS_WITH", "fieldValue": {"value": "Mei"}},
                         {"fieldName": "year", "comparator": "GREATER_THAN", "fieldValue": {"value": 2000}}]})},
        {"operationType": "create", "subscription": {"subscriptionID": "work", "subscriptionType": "zone", "zoneID": {"zoneName": "Work"}}},
        {"operationType": "create", "subscription": {"subscriptionID": "bad", "subscriptionType": "zone", "zoneID": {"zoneName": "Nope"}}},
        {"operationType": "create", "subscription": {"subscriptionID": "worse", "subscriptionType": "fancy"}},
        {"operationType": "create", "subscription": {"subscriptionID": "tasks", "subscriptionType": "zone", "zoneID": {"zoneName": "Work"},
                                                     "recordType": "Task"}},
    ]}))["subscriptions"]
    assert rs[0]["subscriptionID"] == "posters" and rs[0]["subscriptionType"] == "query", rs[0]
    filters = rs[0]["query"]["filterBy"]
    assert [f["comparator"] for f in filters] == ["BEGINS_WITH", "GREATER_THAN"] and filters[1]["fieldValue"] == {"value": 2000, "type": "INT64"}, filters
    assert rs[0]["firesOn"] == ["create", "update", "delete"] and rs[0]["zoneWide"] is True, rs[0]
    assert rs[0]["notificationInfo"]["alertBody"] == "new poster" and rs[0]["notificationInfo"]["shouldBadge"] is True, rs[0]
    # Apple's localization keys of notificationInfo are kept and given back.
    info = rs[0]["notificationInfo"]
    assert (info["alertLocalizationKey"], info["alertLocalizationArgs"], info["alertActionLocalizationKey"], info["alertLaunchImage"]) == \
        ("POSTER_%@", ["band"], "SEE", "poster.png"), info
    assert rs[1]["subscriptionType"] == "zone" and rs[1]["zoneID"]["zoneName"] == "Work", rs[1]
    assert rs[2]["serverErrorCode"] == "ZONE_NOT_FOUND" and rs[2]["subscriptionID"] == "bad", rs[2]
    assert rs[3]["serverErrorCode"] == "BAD_REQUEST" and rs[3]["subscriptionID"] == "worse", rs[3]
    assert rs[4]["subscriptionType"] == "zone" and rs[4]["recordType"] == "Task", rs[4]
    assert [x.get("recordType") for x in json.loads(ckfs("subscription", "list")) if x["subscriptionID"] == "tasks"] == ["Task"]
    ok(post("private", "subscriptions/modify", {"operations": [{"operationType": "delete", "subscription": {"subscriptionID": "tasks"}}]}))

    listed = ok(call("GET", "private", "subscriptions/list"))["subscriptions"]
    assert sorted(s["subscriptionID"] for s in listed) == ["posters", "work"], listed
    assert "posters" in ckfs("subscription", "list")
    # lookup: under the database, and at Apple's path without one.
    for db in ("private", None):
        rs = ok(post(db, "subscriptions/lookup", {"subscriptions": [{"subscriptionID": "work"}, {"subscriptionID": "gone"}]}))["subscriptions"]
        assert rs[0]["subscriptionID"] == "work" and rs[1]["serverErrorCode"] == "NOT_FOUND", rs
    # update changes it; delete removes it; a second delete is NOT_FOUND.
    rs = ok(post("private", "subscriptions/modify", {"operations": [
        {"operationType": "update", "subscription": query_subscription("posters", firesOn=["delete"])},
        {"operationType": "update", "subscription": query_subscription("missing")},
    ]}))["subscriptions"]
    assert rs[0]["firesOn"] == ["delete"] and rs[1]["serverErrorCode"] == "NOT_FOUND", rs
    rs = ok(post("private", "subscriptions/modify", {"operations": [
        {"operationType": "delete", "subscription": {"subscriptionID": "work"}}]}))["subscriptions"]
    assert rs == [{"subscriptionID": "work", "deleted": True}], rs
    rs = ok(post("private", "subscriptions/modify", {"operations": [
        {"operationType": "delete", "subscription": {"subscriptionID": "work"}}]}))["subscriptions"]
    assert rs[0]["serverErrorCode"] == "NOT_FOUND", rs
    # Two operations on one subscription in one request: the second is refused.
    rs = ok(post("private", "subscriptions/modify", {"operations": [
        {"operationType": "delete", "subscription": {"subscriptionID": "posters"}},
        {"operationType": "create", "subscription": query_subscription("posters")}]}))["subscriptions"]
    assert rs[0]["deleted"] is True and rs[1]["serverErrorCode"] == "BAD_REQUEST", rs
    # Another user sees none of them.
    from cloudkit_client import WEB_TOKEN_BOB
    assert ok(call("GET", "private", "subscriptions/list", web=WEB_TOKEN_BOB))["subscriptions"] == []


class Poll(threading.Thread):
    """A web courier long poll, as OpenCloudKit makes it: a plain GET of the URL."""

    def __init__(self, url):
        super().__init__(daemon=True)
        self.url = url
        self.status = None
        self.body = None

    def run(self):
        r = requests.get(self.url, timeout=60)
        self.status = r.status_code
        self.body = r.json() if r.content else None


def register():
    created = ok(post(None, "tokens/create", {"apnsEnvironment": "development"}, web=None))
    assert created["apnsEnvironment"] == "development" and len(created["apnsToken"]) == 64, created
    assert created["webcourierURL"].startswith(URL + "/webcourier/"), created
    # Made without a user (an API token alone), it is not registered: a poll waits out its
    # time (3 s in these tests) and delivers nothing.
    start = time.monotonic()
    r = requests.get(created["webcourierURL"], timeout=10)
    assert r.status_code == 204 and time.monotonic() - start > 2.5, (r.status_code, r.text)
    fail(post(None, "tokens/register", {"apnsEnvironment": "development", "apnsToken": created["apnsToken"]}, web=None),
         421, "AUTHENTICATION_REQUIRED", "register without a user")
    ok(post(None, "tokens/register", {"apnsEnvironment": "development", "apnsToken": created["apnsToken"]}))
    return created["webcourierURL"]


def test_long_poll_woken_by_the_mount():
    """alice's web client long-polls; the mount's user saves a public record that her query
    subscription watches; the poll returns that notification's APNs payload at once."""
    mount = os.environ["CKFS_MOUNT"]
    ok(post("public", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Poster", "recordName": "seed", "fields": {"band": {"value": "seed"}}}}]}))
    ok(post("public", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": query_subscription(
        "posters", notificationInfo={"alertBody": "new poster", "desiredKeys": ["band"]})}]}))
    url = register()
    poll = Poll(url)
    poll.start()
    time.sleep(0.5)
    assert poll.status is None, "the poll answered before anything happened"
    folder = f"{mount}/iCloud.local.ckfs/public/_defaultZone/Poster"
    started = time.monotonic()
    with open(f"{folder}/gig.json", "w") as f:
        f.write('{"fields": {"band": "Mei & the Inks"}}\n')
    poll.join(20)
    waited = time.monotonic() - started
    assert poll.status == 200, (poll.status, poll.body)
    ck = poll.body["ck"]
    assert ck["cid"] == "iCloud.local.ckfs" and ck["nid"], ck
    assert ck["qry"]["sid"] == "posters" and ck["qry"]["rid"] == "gig" and ck["qry"]["fo"] == 1 and ck["qry"]["dbs"] == 1, ck
    assert ck["qry"]["af"] == {"band": "Mei & the Inks"}, ck
    assert poll.body["aps"]["alert"]["body"] == "new poster", poll.body
    assert waited < 5, f"the poll took {waited:.1f} s to wake"

    # The next poll delivers the next notification only: an update from the CLI as bob.
    poll = Poll(url)
    poll.start()
    time.sleep(0.3)
    ckfs("record", "save", "--database", "public", user="bob",
         input=json.dumps({"recordType": "Poster", "recordName": "bobs", "fields": {"band": "Bob"}}))
    poll.join(20)
    assert poll.status == 200 and poll.body["ck"]["qry"]["rid"] == "bobs", poll.body

    # alice's own change through this web client is not sent back to it; the poll ends idle.
    poll = Poll(url)
    poll.start()
    ok(post("public", "records/modify", {"operations": [{"operationType": "create", "record": {
        "recordType": "Poster", "recordName": "mine", "fields": {"band": {"value": "alice"}}}}]}))
    poll.join(30)
    assert poll.status == 204, (poll.status, poll.body)


def test_zone_notifications():
    """A zone subscription's notification carries `fet`, woken by a CLI save in the zone."""
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Work"}}}]}))
    ok(post("private", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": {
        "subscriptionID": "work", "subscriptionType": "zone", "zoneID": {"zoneName": "Work"},
        "notificationInfo": {"shouldSendContentAvailable": True}}}]}))
    url = register()
    poll = Poll(url)
    poll.start()
    ckfs("record", "save", "--zone", "Work", input=json.dumps({"recordType": "Note", "recordName": "n", "fields": {"t": "x"}}))
    poll.join(20)
    assert poll.status == 200, (poll.status, poll.body)
    fet = poll.body["ck"]["fet"]
    assert fet["sid"] == "work" and fet["zid"] == "Work" and fet["dbs"] == 2, poll.body
    assert poll.body["aps"]["content-available"] == 1, poll.body
    # An unknown courier URL is NOT_FOUND.
    r = requests.get(url[:-4] + "0000", timeout=10)
    assert r.status_code == 404, r.text


def test_created_token_is_polled_at_once():
    """CloudKit JS's registerForNotifications: a signed-in tokens/create, then at once a long poll
    of its URL, never tokens/register. The poll is delivered to; an unknown token's poll, in a
    loop as tight as CloudKit JS makes it, costs about one request a second and gets no JSON
    (which CloudKit JS would hand to the app as a notification)."""
    ok(post("private", "zones/modify", {"operations": [{"operationType": "create", "zone": {"zoneID": {"zoneName": "Work"}}}]}))
    ok(post("private", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": {
        "subscriptionID": "work", "subscriptionType": "zone", "zoneID": {"zoneName": "Work"},
        "notificationInfo": {"shouldSendContentAvailable": True}}}]}))
    created = ok(post(None, "tokens/create", {"apnsEnvironment": "development"}))
    poll = Poll(created["webcourierURL"])
    poll.start()
    time.sleep(0.3)
    ckfs("record", "save", "--zone", "Work", input=json.dumps({"recordType": "Note", "recordName": "n", "fields": {"t": "x"}}))
    poll.join(20)
    assert poll.status == 200 and poll.body["ck"]["fet"]["sid"] == "work", (poll.status, poll.body)

    unknown = created["webcourierURL"][:-8] + "00000000"
    start, polls = time.monotonic(), 0
    while time.monotonic() - start < 3:
        r = requests.get(unknown, timeout=10)
        polls += 1
        assert r.status_code == 404 and "tokens/create" in r.text, (r.status_code, r.text)
        try:
            r.json()
            assert False, "an unknown token's poll answered JSON: " + r.text
        except ValueError:
            pass
    assert polls <= 4, polls


if __name__ == "__main__":
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"{name}: passed")
