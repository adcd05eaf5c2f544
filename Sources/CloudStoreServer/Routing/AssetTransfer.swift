import CloudStore
import CloudStoreServerCore
import Foundation
import Hummingbird
import NIOCore

/// The bytes of assets: `POST /assets/upload/<slot>` takes a file (raw bytes, as `curl
/// --data-binary`) and answers with its receipt; `GET /assets/download/<token>` gives an asset
/// of a record back. Both URLs are capabilities, with no other credentials.
struct AssetTransfer: Sendable {
    let store: Store
    let configuration: WebServerConfiguration
    let assets: AssetStaging
    let bodyDeadlines: BodyDeadlines

    func receive(_ request: Request, _ context: WebRequestContext) async -> Response {
        let slot = context.parameters.get("slot") ?? ""
        // An unknown URL is refused before its body is read: only a holder of one uploads.
        guard assets.hasSlot(slot) else {
            return WebAPI.json(CKError(.unknownItem, "this upload URL is unknown, used or expired (they last 15 minutes and take one upload); ask assets/upload for another")
                .webServicesDictionary(), status: .notFound)
        }
        do {
            var request = request
            let bytes = try await RequestBody.read(&request, limit: configuration.maxAssetBytes, deadlines: bodyDeadlines, on: context.channel)
            let assets = self.assets
            let staged = try await WebAPI.blocking { () throws(CKError) in try assets.receive(slot: slot, bytes: bytes) }
            return WebAPI.json(.object(["singleFile": .object([
                "fileChecksum": .string(staged.checksum), "size": .int(staged.size), "receipt": .string(staged.receipt),
                "wrappingKey": .string(""), "referenceChecksum": .string(""),
            ])]), status: .ok)
        } catch let failure as WebFailure {
            return WebAPI.json(failure.dictionary(redirectURL: nil), status: failure.status)
        } catch let error as CKError {
            return WebAPI.json(error.webServicesDictionary(), status: error.webServicesCode.status)
        } catch {
            return WebAPI.json(CKError(.internalError, "\(error)").webServicesDictionary(), status: .internalServerError)
        }
    }

    func send(_ request: Request, _ context: WebRequestContext) async -> Response {
        let token = context.parameters.get("token") ?? ""
        let store = self.store
        guard let (owner, zone, asset) = assets.download(token), configuration.containers?.contains(owner.container) ?? true else {
            return WebAPI.json(CKError(.unknownItem, "this download URL is not one this server gave (they last until it stops); fetch the record again for a new one")
                .webServicesDictionary(), status: .notFound)
        }
        do {
            let data = try await WebAPI.blocking { () throws(CKError) -> Data in
                let container = try store.container(owner.container)
                let caller = owner.userName.isEmpty ? Caller.noAccount() : Caller(userName: owner.userName)
                // A shared record's asset is in its owner's zone.
                let db = owner.scope == .shared
                    ? try container.sharedDatabase(caller: caller, environment: owner.environment).database(owner: zone.ownerName)
                    : try container.database(owner.scope, caller: caller, environment: owner.environment)
                // A URL given to a participant ends with their access to the zone.
                if owner.scope == .shared { _ = try db.zone(zone.zoneName) }
                let path = try db.assetFile(asset, zone: zone.zoneName)
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw CKError(.assetFileNotFound, "the asset \(asset.fileChecksum) is no longer in zone \(zone.zoneName)")
                }
                return data
            }
            return Response(status: .ok, headers: [.contentType: "application/octet-stream"],
                            body: .init(byteBuffer: ByteBuffer(bytes: data)))
        } catch {
            return WebAPI.json(error.webServicesDictionary(), status: error.webServicesCode.status)
        }
    }
}
