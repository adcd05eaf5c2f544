import Foundation
import Testing

/// The floor plan of docs/Architecture.md holds in the code: scripts/check-floor-plan finds no
/// file that uses a floor above its own, no two rooms of a floor that use each other, and no
/// module importing one the plan does not give it.
@Suite struct ArchitectureTests {
    @Test func everyFileUsesOnlyItsFloorAndTheFloorsBelow() {
        let r = CLIFixture.exec(MountHelperTests.packageRoot + "/scripts/check-floor-plan", [])
        #expect(r.status == 0, "\(r.stdout.prefix(3000))")
    }
}
