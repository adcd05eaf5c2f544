import Foundation

/// The value of one record field. A list holds values of one kind.
public enum FieldValue: Sendable, Equatable {
    case string(String)
    case int64(Int64)
    case double(Double)
    case bytes(Data)
    /// A date, whole: files keep it as milliseconds since 1970 (as CloudKit Web Services
    /// write dates) and the fraction of a millisecond past them (`Date.millisecondParts`).
    case timestamp(Date)
    // Indirect: a location (64 bytes) or an asset inline would make every value, and so
    // every field of every record kept in memory, that large.
    indirect case location(Location)
    case reference(Reference)
    indirect case asset(Asset)
    case list(FieldType.Kind, [FieldValue])

    public var type: FieldType {
        switch self {
        case .string: FieldType(.string)
        case .int64: FieldType(.int64)
        case .double: FieldType(.double)
        case .bytes: FieldType(.bytes)
        case .timestamp: FieldType(.timestamp)
        case .location: FieldType(.location)
        case .reference: FieldType(.reference)
        case .asset: FieldType(.asset)
        case .list(let kind, _): FieldType(kind, list: true)
        }
    }

    public static func date(_ date: Date) -> FieldValue { .timestamp(date) }

    /// The date `milliseconds` after 1970 began.
    public static func timestamp(milliseconds: Int64) -> FieldValue { .timestamp(Date(millisecondsSince1970: milliseconds)) }

    public var dateValue: Date? {
        if case .timestamp(let date) = self { return date }
        return nil
    }

    /// Bytes this value counts toward the record size limit. Assets count only their
    /// reference, since their contents are kept apart.
    public var size: Int {
        switch self {
        case .string(let s): s.utf8.count
        case .int64, .double, .timestamp: 8
        case .bytes(let d): d.count
        case .location: 64
        case .reference(let r): r.recordName.utf8.count + 8
        case .asset: 72
        case .list(_, let values): values.reduce(0) { $0 + $1.size }
        }
    }

    /// The words of a string value, for `allTokens`.
    var tokens: [String] {
        switch self {
        case .string(let s): s.split(whereSeparator: { $0.isWhitespace }).map(String.init)
        case .list(.string, let values): values.flatMap(\.tokens)
        default: []
        }
    }
}

/// A point on Earth with the accuracies CoreLocation gives (CoreLocation does not exist on Linux).
public struct Location: Sendable, Hashable {
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double
    public var horizontalAccuracy: Double
    public var verticalAccuracy: Double
    /// Degrees from north; negative when unknown.
    public var course: Double
    /// Metres per second; negative when unknown.
    public var speed: Double
    /// Milliseconds since 1970.
    public var timestamp: Int64

    public init(latitude: Double, longitude: Double, altitude: Double = 0, horizontalAccuracy: Double = 0,
                verticalAccuracy: Double = -1, course: Double = -1, speed: Double = -1, timestamp: Int64 = 0) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.course = course
        self.speed = speed
        self.timestamp = timestamp
    }

    /// Great-circle distance in metres (haversine, mean Earth radius).
    public func distance(from other: Location) -> Double {
        let r = 6_371_008.8
        let toRad = Double.pi / 180
        let dLat = (other.latitude - latitude) * toRad
        let dLon = (other.longitude - longitude) * toRad
        let a = sin(dLat / 2) * sin(dLat / 2)
            + cos(latitude * toRad) * cos(other.latitude * toRad) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * r * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}

/// A link from one record to another in the same zone.
public struct Reference: Sendable, Equatable, Hashable {
    public enum Action: String, Sendable {
        case none = "NONE"
        /// Deleting the target deletes the record holding this reference.
        case deleteSelf = "DELETE_SELF"
    }

    public var recordName: String
    public var action: Action

    public init(recordName: String, action: Action = .none) {
        self.recordName = recordName
        self.action = action
    }
}

/// A file kept beside the record, content-addressed by its SHA-256.
public struct Asset: Sendable, Equatable {
    /// Lower-case hex SHA-256 of the contents; empty until a pending file is stored.
    public var fileChecksum: String
    public var size: Int64
    /// A local file still to be copied into the store by the next save.
    public var pendingFile: String?
    /// Where this stored asset's contents may be read when a save puts it in a zone that lacks
    /// it (a fetched `CKAsset`'s file, set on a record of another zone); not part of the value.
    public var copyFrom: String?

    public init(fileChecksum: String, size: Int64, copyFrom: String? = nil) {
        self.fileChecksum = fileChecksum
        self.size = size
        self.pendingFile = nil
        self.copyFrom = copyFrom
    }

    /// An asset to be made from a local file when the record is saved.
    public init(file path: String) {
        self.fileChecksum = ""
        self.size = 0
        self.pendingFile = path
    }

    public static func == (a: Asset, b: Asset) -> Bool {
        a.fileChecksum == b.fileChecksum && a.size == b.size && a.pendingFile == b.pendingFile
    }
}
