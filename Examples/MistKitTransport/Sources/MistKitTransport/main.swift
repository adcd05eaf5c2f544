// docs/WebServices.md's MistKit transport as it stands there (scripts/doc-harness/web-client
// checks that the docs' block is this text), then what MistKit does with it: one request, sent
// as to Apple's server, which the transport sends to ckfs serve instead.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

struct CKFSTransport: ClientTransport {
    let inner = URLSessionTransport()
    func send(_ r: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        try await inner.send(r, body: body, baseURL: URL(string: "http://127.0.0.1:8880")!, operationID: operationID)
    }
}

let token = ProcessInfo.processInfo.environment["CKFS_API_TOKEN"] ?? ""
var request = HTTPRequest(method: .post, scheme: nil, authority: nil,
                          path: "/database/1/iCloud.local.ckfs/development/public/records/query?ckAPIToken=\(token)")
request.headerFields[.contentType] = "application/json"
let (response, body) = try await CKFSTransport().send(request, body: HTTPBody(#"{"query": {"recordType": "Note"}}"#),
                                                      baseURL: URL(string: "https://api.apple-cloudkit.com")!, operationID: "queryRecords")
let text = try await String(collecting: body ?? HTTPBody(), upTo: 1 << 20)
guard response.status == .ok, text.contains("\"records\"") else {
    print("records/query through the transport: \(response.status) \(text)")
    exit(1)
}
print("records/query through the MistKit transport answered 200")
