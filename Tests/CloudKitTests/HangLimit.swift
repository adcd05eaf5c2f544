import Testing

/// The time limit of a test that waits for an operation's blocks, so that one never called fails
/// the test instead of holding up the run. Swift Testing counts in it the time the test waits
/// for a thread of its pool, which the suites that wait on processes and mounts hold for most of
/// a `swift test` run on two cores; so the limit lies past a whole run: it fails a hang, never
/// a wait for a thread.
let hangLimit: TimeLimitTrait.Duration = .minutes(10)
