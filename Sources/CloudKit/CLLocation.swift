import Foundation
import CloudStore

// CoreLocation's names that Apple's CloudKit brings with it (CloudKit code writes
// `record["place"] = CLLocation(latitude:longitude:)` with `import CloudKit` alone). Linux has no
// CoreLocation, so they are declared here, with CoreLocation's shapes, over the engine's
// `Location`.

public typealias CLLocationDegrees = Double
public typealias CLLocationDistance = Double
public typealias CLLocationAccuracy = Double
public typealias CLLocationDirection = Double
public typealias CLLocationSpeed = Double

/// A latitude and a longitude, in degrees.
public struct CLLocationCoordinate2D: Sendable, Hashable {
    public var latitude: CLLocationDegrees
    public var longitude: CLLocationDegrees

    public init() { self.init(latitude: 0, longitude: 0) }
    public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A place and when it was measured, as CoreLocation's `CLLocation`: a record value (a
/// LOCATION field reads back as one), a predicate argument, a distance sort's point. Negative
/// accuracies, course and speed mean unknown, as CoreLocation's do.
///
/// `@unchecked Sendable`: immutable; its stored property is a `let` of a `Sendable` type.
open class CLLocation: NSObject, NSSecureCoding, NSCopying, CKRecordValueProtocol, @unchecked Sendable {
    /// The engine's form of the place.
    public let location: Location

    public init(_ location: Location) {
        self.location = location
        super.init()
    }

    public convenience init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
        self.init(Location(latitude: latitude, longitude: longitude))
    }

    public convenience init(coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance, horizontalAccuracy hAccuracy: CLLocationAccuracy,
                            verticalAccuracy vAccuracy: CLLocationAccuracy, timestamp: Date) {
        self.init(coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
                  course: -1, speed: -1, timestamp: timestamp)
    }

    public convenience init(coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance, horizontalAccuracy hAccuracy: CLLocationAccuracy,
                            verticalAccuracy vAccuracy: CLLocationAccuracy, course: CLLocationDirection, speed: CLLocationSpeed, timestamp: Date) {
        self.init(Location(latitude: coordinate.latitude, longitude: coordinate.longitude, altitude: altitude, horizontalAccuracy: hAccuracy,
                           verticalAccuracy: vAccuracy, course: course, speed: speed,
                           timestamp: Int64((timestamp.timeIntervalSince1970 * 1000).rounded())))
    }

    public var coordinate: CLLocationCoordinate2D { CLLocationCoordinate2D(latitude: location.latitude, longitude: location.longitude) }
    public var altitude: CLLocationDistance { location.altitude }
    public var horizontalAccuracy: CLLocationAccuracy { location.horizontalAccuracy }
    public var verticalAccuracy: CLLocationAccuracy { location.verticalAccuracy }
    public var course: CLLocationDirection { location.course }
    public var speed: CLLocationSpeed { location.speed }
    public var timestamp: Date { Date(timeIntervalSince1970: Double(location.timestamp) / 1000) }

    /// The great-circle distance to `location`, in metres.
    public func distance(from location: CLLocation) -> CLLocationDistance { self.location.distance(from: location.location) }

    public var fieldValue: FieldValue { .location(location) }

    open override func isEqual(_ object: Any?) -> Bool { (object as? CLLocation)?.location == location }
    open override var hash: Int { location.hashValue }
    open override var description: String { "<\(location.latitude),\(location.longitude)> +/- \(location.horizontalAccuracy)m" }

    /// Immutable: the copy is the location itself.
    open func copy(with zone: NSZone? = nil) -> Any { self }

    public class var supportsSecureCoding: Bool { true }

    open func encode(with coder: NSCoder) {
        for (key, value) in [("latitude", location.latitude), ("longitude", location.longitude), ("altitude", location.altitude),
                             ("horizontalAccuracy", location.horizontalAccuracy), ("verticalAccuracy", location.verticalAccuracy),
                             ("course", location.course), ("speed", location.speed)] { coder.encode(value, forKey: key) }
        coder.encode(location.timestamp, forKey: "timestamp")
    }

    public required init?(coder: NSCoder) {
        location = Location(latitude: coder.decodeDouble(forKey: "latitude"), longitude: coder.decodeDouble(forKey: "longitude"),
                            altitude: coder.decodeDouble(forKey: "altitude"), horizontalAccuracy: coder.decodeDouble(forKey: "horizontalAccuracy"),
                            verticalAccuracy: coder.decodeDouble(forKey: "verticalAccuracy"), course: coder.decodeDouble(forKey: "course"),
                            speed: coder.decodeDouble(forKey: "speed"), timestamp: coder.decodeInt64(forKey: "timestamp"))
        super.init()
    }
}
