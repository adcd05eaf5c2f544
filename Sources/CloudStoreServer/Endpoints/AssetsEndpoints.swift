import CloudStore

/// `assets/upload` (an upload URL per asset field) and `assets/rereference` (a receipt for an
/// asset a record holds, to put it in another record).
enum AssetsEndpoints {
    static func upload(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.database()
        _ = try db.currentChangeToken(in: try WebRecordCoding.zoneID(call.body["zoneID"], in: db).zoneName)
        var out: [JSONValue] = []
        for (i, token) in try call.array("tokens", limit: RecordsEndpoints.maxItems).enumerated() {
            guard let field = token["fieldName"]?.stringValue, !field.isEmpty else {
                throw CKError(.invalidArguments, "tokens[\(i)] needs \"fieldName\", the asset field the upload is for")
            }
            let recordName = token["recordName"]?.stringValue ?? RecordID().recordName
            let slot = try call.assets.openSlot(call.assetOwner, database: db, recordName: recordName, fieldName: field)
            out.append(.object(["recordName": .string(recordName), "fieldName": .string(field),
                                "url": .string("\(call.baseURL)/assets/upload/\(slot)")]))
        }
        return .object(["tokens": .array(out)])
    }

    static func rereference(_ call: WebCall) throws(CKError) -> JSONValue {
        let db = try call.database()
        let zone = try WebRecordCoding.zoneID(call.body["zoneID"], in: db)
        var out: [JSONValue] = []
        for (i, entry) in try call.array("assets", limit: RecordsEndpoints.maxItems).enumerated() {
            guard let name = entry["recordName"]?.stringValue, let field = entry["fieldName"]?.stringValue else {
                throw CKError(.invalidArguments, "assets[\(i)] needs \"recordName\" and \"fieldName\"")
            }
            do throws(CKError) {
                let record = try db.record(for: RecordID(recordName: name, zoneID: zone))
                // An asset list gives one dictionary per asset, in order.
                let assets: [Asset] = switch record[field] {
                case .asset(let asset)?: [asset]
                case .list(.asset, let items)?: items.compactMap { if case .asset(let a) = $0 { a } else { nil } }
                default: throw CKError(.invalidArguments, "field \(field) of record \(name) holds no asset")
                }
                for asset in assets {
                    let receipt = call.assets.rereference(call.assetOwner, path: try db.assetFile(asset, zone: zone.zoneName),
                                                          checksum: asset.fileChecksum, size: asset.size)
                    out.append(.object(["recordName": .string(name), "fieldName": .string(field), "fileChecksum": .string(asset.fileChecksum),
                                        "size": .int(asset.size), "receipt": .string(receipt), "wrappingKey": .string(""),
                                        "referenceChecksum": .string("")]))
                }
            } catch {
                out.append(WebRecordCoding.error(error, recordName: name))
            }
        }
        return .object(["assets": .array(out)])
    }
}
