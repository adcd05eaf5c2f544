"""Who may call `ckfs serve`: API tokens, web auth tokens and server-to-server keys signed by
requests-cloudkit (PyPI). Run by WebServicesAuthTests: `python3 test_auth.py TEST...`."""
import base64
import datetime
import hashlib
import json
import sys
import time
import urllib.parse

import ecdsa
import requests

from cloudkit_client import (API_TOKEN, CONTAINER, KEY_ID, KEY_PEM, STORE, URL, WEB_TOKEN, WEB_TOKEN_BOB, base,
                             call, ckfs, fail, ok, post, signed, SignedAuth)

CREATE = {"operations": [{"operationType": "create", "record": {"recordType": "Note", "recordName": "n1",
                                                                "fields": {"text": {"value": "hi"}}}}]}


def test_tokens():
    """An API token alone reads the public database; a user's web auth token writes it and
    reaches the user's private database; everything else is refused with Apple's codes."""
    # Without credentials: AUTHENTICATION_REQUIRED with a redirectURL to a page that says how to sign in.
    body = fail(call("GET", "public", "users/current", api=None, web=None), 421, "AUTHENTICATION_REQUIRED", "no tokens")
    page = requests.get(body["redirectURL"], timeout=10)
    assert page.status_code == 200 and "ckfs token sign-in" in page.text, page.text
    # users/current without a user: Apple's own example of 421.
    fail(call("GET", "public", "users/current", web=None), 421, "AUTHENTICATION_REQUIRED", "API token alone")
    # A wrong API token, a wrong or expired web auth token: AUTHENTICATION_FAILED.
    fail(call("GET", "public", "zones/list", api="0" * 64, web=None), 401, "AUTHENTICATION_FAILED", "wrong API token")
    fail(call("GET", "public", "zones/list", web="not-a-token"), 401, "AUTHENTICATION_FAILED", "wrong web token")
    short = ckfs("token", "sign-in", "--lifetime", "1").strip()
    time.sleep(1.2)
    fail(call("GET", "private", "zones/list", web=short), 401, "AUTHENTICATION_FAILED", "expired web token")

    # The API token alone: reads public, cannot write it, cannot touch private.
    ok(post("public", "records/modify", CREATE), "alice writes public")
    rec = ok(post("public", "records/lookup", {"records": [{"recordName": "n1"}]}, web=None))["records"][0]
    assert rec["fields"]["text"]["value"] == "hi", rec
    fail(post("public", "records/modify", CREATE, web=None), 421, "AUTHENTICATION_REQUIRED", "write without user")
    fail(call("GET", "private", "zones/list", web=None), 421, "AUTHENTICATION_REQUIRED", "private without user")

    # The web auth token is Base64 with +, / and =: requests percent-encodes it, and a client
    # that sends %2B etc. by hand is understood the same way.
    assert any(c in WEB_TOKEN for c in "+/="), WEB_TOKEN
    q = "ckAPIToken=" + API_TOKEN + "&ckWebAuthToken=" + urllib.parse.quote(WEB_TOKEN, safe="")
    r = requests.get(f"{base()}/private/zones/list?{q}", timeout=10)
    assert r.status_code == 200, r.text

    # Private data is its owner's: bob sees none of alice's records.
    mine = ok(post("private", "records/modify", CREATE), "alice writes private")["records"][0]
    theirs = ok(post("private", "records/lookup", {"records": [{"recordName": "n1"}]}, web=WEB_TOKEN_BOB))["records"][0]
    assert theirs["serverErrorCode"] == "NOT_FOUND", theirs
    # bob may not change alice's public record.
    change = {"operations": [{"operationType": "forceUpdate", "record": {"recordName": "n1", "fields": {"text": {"value": "bob"}}}}]}
    r = ok(post("public", "records/modify", change, web=WEB_TOKEN_BOB))["records"][0]
    assert r["serverErrorCode"] == "ACCESS_DENIED", r
    # users/current and users/caller name the signed-in user.
    me = ok(call("GET", "public", "users/current"))
    answer = ok(call("GET", "public", "users/caller"))
    caller = answer["users"][0]
    assert me["userRecordName"] == caller["userRecordName"] == mine["created"]["userRecordName"], (me, caller)
    assert caller["nameComponents"]["givenName"] == "alice", caller
    # CloudKit JS (fetchCurrentUserIdentity, setUpAuth) reads the identity at the top level.
    for key in ("userRecordName", "nameComponents", "lookupInfo"):
        assert answer[key] == caller[key], (key, answer)
    bob = ok(call("GET", "public", "users/current", web=WEB_TOKEN_BOB))
    assert bob["userRecordName"] != me["userRecordName"] and bob["userRecordName"].startswith("_"), bob
    # A restricted account's token stops working, for reads too.
    ckfs("user", "update", "bob", "--restricted", user=None)
    fail(call("GET", "private", "zones/list", web=WEB_TOKEN_BOB), 401, "AUTHENTICATION_FAILED", "restricted")
    ckfs("user", "update", "bob", "--no-restricted", user=None)
    ok(call("GET", "private", "zones/list", web=WEB_TOKEN_BOB), "allowed again")


def test_urls():
    """URLs as Apple's: a wrong environment, database, container, endpoint or method is refused
    with an error dictionary, and the environments keep apart."""
    fail(call("GET", "public", "zones/list", env="staging"), 400, "BAD_REQUEST", "environment")
    # The shared database answers a signed-in user (no zone is shared with alice here).
    assert ok(call("GET", "shared", "zones/list"), "shared")["zones"] == []
    fail(call("GET", "secret", "zones/list"), 400, "BAD_REQUEST", "database")
    r = requests.get(f"{URL}/database/1/iCloud.no.such/development/public/zones/list", params={"ckAPIToken": API_TOKEN}, timeout=10)
    assert r.status_code == 400 and r.json()["serverErrorCode"] == "BAD_REQUEST" and "iCloud.no.such" in r.json()["reason"], r.text
    r = requests.get(f"{base()}/public/records/modify", params={"ckAPIToken": API_TOKEN}, timeout=10)
    assert r.status_code in (404, 405), r.status_code
    r = requests.post(f"{base()}/public/records/nothing", params={"ckAPIToken": API_TOKEN}, data="{}", timeout=10)
    assert r.status_code == 404, r.status_code
    # development and production are two data sets.
    ok(post("public", "records/modify", CREATE))
    prod = ok(post("public", "records/lookup", {"records": [{"recordName": "n1"}]}, env="production"))["records"][0]
    assert prod["serverErrorCode"] in ("NOT_FOUND", "BAD_REQUEST"), prod


def test_server_to_server_keys():
    """Requests signed by requests-cloudkit with a key from `ckfs key add` act on the public
    database; a bad signature, an unknown key, a stale date and the private database are refused."""
    status, body = signed("POST", "records/modify", CREATE)
    assert status == 200 and body["records"][0]["recordName"] == "n1", body
    creator = body["records"][0]["created"]["userRecordName"]
    status, body = signed("POST", "records/lookup", {"records": [{"recordName": "n1"}]})
    assert status == 200 and body["records"][0]["fields"]["text"]["value"] == "hi", body
    status, body = signed("GET", "zones/list")
    assert status == 200 and body["zones"][0]["zoneID"]["zoneName"] == "_defaultZone", body
    # The key acts as the identity that added it (alice): the same creator as her web token.
    rec = ok(post("public", "records/lookup", {"records": [{"recordName": "n1"}]}))["records"][0]
    assert rec["created"]["userRecordName"] == creator

    # The private database is not the key's.
    status, body = signed("GET", "zones/list", db="private")
    assert status == 421 and body["serverErrorCode"] == "AUTHENTICATION_REQUIRED", body
    # A key ckfs does not know.
    status, body = signed("GET", "zones/list", key_id="f" * 64)
    assert status == 401 and body["serverErrorCode"] == "AUTHENTICATION_FAILED", body

    def send(headers, data=b"{}", path="records/lookup"):
        r = requests.post(f"{base()}/public/{path}", data=data, headers=headers, timeout=10)
        return r.status_code, r.json()

    # Sign one request properly, then change each part.
    auth = SignedAuth(KEY_ID, KEY_PEM)
    req = requests.Request("POST", f"{base()}/public/records/lookup", data='{"records":[]}', auth=auth).prepare()
    good = dict(req.headers)
    assert send(good, b'{"records":[]}')[0] == 200
    status, body = send(good, b'{"records": []}')  # other body bytes
    assert status == 401 and body["serverErrorCode"] == "AUTHENTICATION_FAILED", body
    status, body = send(good, b'{"records":[]}', path="records/query")  # other path
    assert status == 401, body
    sig = base64.b64decode(good["X-Apple-CloudKit-Request-SignatureV1"])
    broken = dict(good, **{"X-Apple-CloudKit-Request-SignatureV1": base64.b64encode(sig[:-1] + bytes([sig[-1] ^ 1])).decode()})
    assert send(broken, b'{"records":[]}')[0] == 401
    assert send(dict(good, **{"X-Apple-CloudKit-Request-SignatureV1": "%%%"}), b'{"records":[]}')[0] == 401
    missing = {k: v for k, v in good.items() if k != "X-Apple-CloudKit-Request-ISO8601Date"}
    assert send(missing, b'{"records":[]}')[0] == 401
    # A date eleven minutes old, correctly signed, is refused: no replays.
    old = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=11)).replace(microsecond=0)
    date = old.isoformat().replace("+00:00", "Z")
    path = f"/database/1/{CONTAINER}/development/public/records/lookup"
    stale = dict(good, **{"X-Apple-CloudKit-Request-ISO8601Date": date,
                          "X-Apple-CloudKit-Request-SignatureV1": auth.make_signature(date, '{"records":[]}', path).decode()})
    status, body = send(stale, b'{"records":[]}')
    assert status == 401 and "minutes" in body["reason"], body
    # The same, dated now, passes: the refusal was the date's.
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    fresh = dict(good, **{"X-Apple-CloudKit-Request-ISO8601Date": now,
                          "X-Apple-CloudKit-Request-SignatureV1": auth.make_signature(now, '{"records":[]}', path).decode()})
    assert send(fresh, b'{"records":[]}')[0] == 200
    # MistKit signs a request without a body over `date::path` (no hash of the empty body):
    # taken for a GET; for a request with a body the hash is required.
    with open(KEY_PEM) as f:
        signer = ecdsa.SigningKey.from_pem(f.read())

    def empty_slot(subpath):
        message = f"{now}::/database/1/{CONTAINER}/development/public/{subpath}".encode()
        sig = signer.sign(message, hashfunc=hashlib.sha256, sigencode=ecdsa.util.sigencode_der)
        headers = {k: v for k, v in good.items() if k.lower() != "content-length"}
        return dict(headers, **{"X-Apple-CloudKit-Request-ISO8601Date": now,
                                "X-Apple-CloudKit-Request-SignatureV1": base64.b64encode(sig).decode()})
    r = requests.get(f"{base()}/public/zones/list", headers=empty_slot("zones/list"), timeout=10)
    assert r.status_code == 200 and r.json()["zones"][0]["zoneID"]["zoneName"] == "_defaultZone", r.text
    assert send(empty_slot("records/lookup"), b'{"records":[]}')[0] == 401
    # A key never stands for a web client's push token, nor reaches private subscriptions.
    status, body = signed("POST", "tokens/create", {"apnsEnvironment": "development"})
    assert status == 421 and body["serverErrorCode"] == "AUTHENTICATION_REQUIRED", body
    ok(post("private", "subscriptions/modify", {"operations": [{"operationType": "create", "subscription": {
        "subscriptionID": "mine", "subscriptionType": "query", "query": {"recordType": "Note"}, "firesOn": ["create"]}}]}))
    r = requests.post(f"{base()}/subscriptions/lookup", data=json.dumps({"subscriptions": [{"subscriptionID": "mine"}]}),
                      auth=SignedAuth(KEY_ID, KEY_PEM), timeout=10)
    assert r.status_code == 200 and r.json()["subscriptions"][0]["serverErrorCode"] == "NOT_FOUND", r.text
    # A revoked key stops working at once.
    ckfs("key", "remove", KEY_ID)
    status, body = signed("GET", "zones/list")
    assert status == 401, body


if __name__ == "__main__":
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"{name}: passed")
