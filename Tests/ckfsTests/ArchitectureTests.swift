import Foundation
import Testing
import TestSupport

/// The floor plan of docs/Architecture.md holds in the code: scripts/check-floor-plan finds no
/// file that uses a floor above its own, no two rooms of a floor that use each other, no
/// module importing one the plan does not give it, no call of the C library outside Syscall,
/// no Apple name public in the engine.
@Suite struct ArchitectureTests {
    @Test func everyFileUsesOnlyItsFloorAndTheFloorsBelow() {
        let r = CLIFixture.exec(MountHelperTests.packageRoot + "/scripts/check-floor-plan", [])
        #expect(r.status == 0, "\(r.stdout.prefix(3000))")
    }

    /// The check finds what it is for: in a copy of the sources, a model file that uses the
    /// database floor, a view file that calls the C library itself, an Apple name public in
    /// the engine, a `@testable` import between modules, and CloudKit re-exporting the engine.
    @Test func theCheckReportsAUseOfAnUpperFloorAndACallOfTheCLibrary() throws {
        let copy = NSTemporaryDirectory() + "ckfs-floor-plan-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: copy) }
        try FileManager.default.createDirectory(atPath: copy + "/scripts", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: MountHelperTests.packageRoot + "/Sources", toPath: copy + "/Sources")
        try FileManager.default.copyItem(atPath: MountHelperTests.packageRoot + "/scripts/check-floor-plan", toPath: copy + "/scripts/check-floor-plan")
        let clean = CLIFixture.exec(copy + "/scripts/check-floor-plan", [])
        try #require(clean.status == 0, "the copy passes before anything is planted: \(clean.stdout.prefix(2000))")

        try "func plantedUpward(_ d: Database) {}\n".write(toFile: copy + "/Sources/CloudStore/Model/Planted.swift", atomically: true, encoding: .utf8)
        try "import Glibc\nfunc plantedCall() -> Int32 { Glibc.open(\"/x\", O_RDONLY) + Int32(geteuid()) }\n"
            .write(toFile: copy + "/Sources/CloudStoreFS/View/Planted.swift", atomically: true, encoding: .utf8)
        // A file may name its own function like a C call, but a call written `Glibc.name(` is the C library's.
        try "import Glibc\nfunc rename(_ a: String, _ b: String) -> Int32 { Glibc.rename(a, b) }\nfunc move() -> Int32 { rename(\"a\", \"b\") }\n"
            .write(toFile: copy + "/Sources/CloudStore/Storage/Planted.swift", atomically: true, encoding: .utf8)
        // Apple's names belong to the module CloudKit; modules never reach each other @testable.
        try "public final class CKPlanted {}\n".write(toFile: copy + "/Sources/CloudStore/Model/PlantedApple.swift", atomically: true, encoding: .utf8)
        try "@testable import CloudStore\n".write(toFile: copy + "/Sources/CloudKit/PlantedTestable.swift", atomically: true, encoding: .utf8)
        try "@_exported import CloudStore\n".write(toFile: copy + "/Sources/CloudKit/PlantedExport.swift", atomically: true, encoding: .utf8)
        let r = CLIFixture.exec(copy + "/scripts/check-floor-plan", [])
        #expect(r.status == 1)
        #expect(r.stdout.contains("Sources/CloudStore/Model/PlantedApple.swift: declares CKPlanted public in the engine"), "\(r.stdout)")
        #expect(r.stdout.contains("Sources/CloudKit/PlantedTestable.swift: imports a module @testable"), "\(r.stdout)")
        #expect(r.stdout.contains("Sources/CloudKit/PlantedExport.swift: re-exports CloudStore"), "\(r.stdout)")
        #expect(r.stdout.contains("Sources/CloudStore/Storage/Planted.swift: calls rename itself"), "\(r.stdout)")
        #expect(r.stdout.contains("Sources/CloudStore/Model/Planted.swift: Model/ uses Database from Database/, a floor above"), "\(r.stdout)")
        #expect(r.stdout.contains("Sources/CloudStoreFS/View/Planted.swift: calls open itself"), "\(r.stdout)")
        #expect(r.stdout.contains("Sources/CloudStoreFS/View/Planted.swift: calls geteuid itself"), "\(r.stdout)")
        // The C library's constants come through Core as its calls do.
        #expect(r.stdout.contains("Sources/CloudStoreFS/View/Planted.swift: imports Glibc"), "\(r.stdout)")
        #expect(r.stdout.contains("Sources/CloudStoreFS/View/Planted.swift: names O_RDONLY itself; write Posix.O_RDONLY"), "\(r.stdout)")
    }

    /// CI fails on a compiler warning in the project's own code, and on no other: a dependency's
    /// warning and the one kept on purpose pass.
    @Test func aWarningInTheProjectsCodeFailsTheBuildCheck() throws {
        let root = MountHelperTests.packageRoot
        let log = NSTemporaryDirectory() + "ckfs-build-log-" + UUID().uuidString
        defer { unlink(log) }
        let kept = "\(root)/Tests/CloudKitSwift5Tests/Swift5ClientTests.swift:46:13: warning: mutation of captured var 'queried' in concurrently-executing code; this is an error in the Swift 6 language mode\n"
        let theirs = "\(root)/.build/checkouts/swift-nio/Sources/NIOCore/Channel.swift:1:1: warning: theirs\n"
        try (kept + theirs).write(toFile: log, atomically: true, encoding: .utf8)
        #expect(CLIFixture.exec(root + "/scripts/check-warnings", [log]).status == 0)
        // One in a file, and one in a macro's expansion, named by the line it came from.
        let ours = "\(root)/Sources/CloudStore/Core/Clock.swift:3:5: warning: variable 'x' was never used\n"
            + "macro expansion #expect:1:22: warning: no calls to throwing functions occur within 'try' expression\n"
            + "`- \(root)/Tests/CloudStoreTests/SharingTests.swift:168:92: note: expanded code originates here\n"
        try (kept + theirs + ours).write(toFile: log, atomically: true, encoding: .utf8)
        let r = CLIFixture.exec(root + "/scripts/check-warnings", [log])
        #expect(r.status == 1)
        #expect(r.stdout == """
            Sources/CloudStore/Core/Clock.swift:3:5: variable 'x' was never used
            Tests/CloudStoreTests/SharingTests.swift:168:92: no calls to throwing functions occur within 'try' expression

            """, "\(r.stdout)")
    }
}
