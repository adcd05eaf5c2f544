import Foundation
import Testing
import TestSupport
@testable import CloudStore

/// The docs stay true: every `sh` block of README.md, CONTRIBUTING.md and docs/*.md runs
/// (scripts/run-doc-blocks, against the ckfs under test, mounts included), and so does every
/// Python, JavaScript and Swift example (scripts/doc-harness/), and every link
/// between them names a file that exists; no comment in the code cites an issue number or a
/// requirement id of a document the repository does not hold, or keeps a lab note
/// (scripts/check-comments).
@Suite(.serialized) struct DocumentationTests {
    static let root = MountHelperTests.packageRoot

    static var documents: [String] {
        let docs = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/docs")) ?? []).filter { $0.hasSuffix(".md") }.sorted()
        return ["README.md", "CONTRIBUTING.md"].filter { FileManager.default.fileExists(atPath: root + "/" + $0) } + docs.map { "docs/" + $0 }
    }

    @Test func everyShellBlockRuns() {
        let bin = URL(fileURLWithPath: CLIFixture.binary).deletingLastPathComponent().path
        let r = CLIFixture.exec(Self.root + "/scripts/run-doc-blocks", ["--bin", bin] + Self.documents.map { Self.root + "/" + $0 })
        #expect(r.status == 0, "\(r.stderr.suffix(4000))")
        // The tour is in README, and it ran: the runner counts each file's blocks.
        let counted = r.stderr.firstMatch(of: /README\.md: (\d+) blocks ran/).flatMap { Int($0.output.1) } ?? 0
        #expect(counted >= 5, "README's tour did not run: \(r.stderr.suffix(2000))")
        // So did the code of other languages: README's Swift, the web clients' Python, JavaScript and
        // Swift (MistKit's transport, a package of its own).
        for (file, blocks) in [("README.md", 1), ("docs/WebServices.md", 3), ("CONTRIBUTING.md", 1)] {
            #expect(r.stderr.contains("\(file): \(blocks) code blocks ran"), "\(file)'s code blocks: \(r.stderr.suffix(2000))")
        }
    }

    @Test func everyLinkBetweenDocumentsLeadsSomewhere() throws {
        for doc in Self.documents {
            let text = try String(contentsOfFile: Self.root + "/" + doc, encoding: .utf8)
            let dir = URL(fileURLWithPath: Self.root + "/" + doc).deletingLastPathComponent()
            let links = text.matches(of: /\]\(([^)#\s]+)(#[^)]*)?\)/).map { String($0.output.1) }
            for link in links where !link.contains("://") && !link.hasPrefix("mailto:") {
                let target = dir.appendingPathComponent(link).standardized.path
                #expect(FileManager.default.fileExists(atPath: target), "\(doc) links to \(link), which does not exist")
            }
        }
    }

    @Test func commentsCiteNothingTheRepositoryLacks() {
        let r = CLIFixture.exec(Self.root + "/scripts/check-comments", [])
        #expect(r.status == 0, "\(r.stdout.prefix(3000))")
    }

    /// The check finds lab notes (a figure measured on some machine, a date) and lets a
    /// design's figures, a format's example and the reference date be.
    @Test func theCommentCheckFindsLabNotes() throws {
        let file = NSTemporaryDirectory() + "ckfs-comments-" + UUID().uuidString + ".swift"
        defer { unlink(file) }
        // One string a line, so that this file's own lines are no comments to the check.
        try ["/// A lookup costs 4-7 µs.",
             "/// Sorting took 60 ms at 100,000 records.",
             "// Decided on 2026-11-29, after the run.",
             "/// Swept every 50 ms, at most 16 MB a request; a limit, not a measurement.",
             "/// Dates as `2026-11-22T09:30:00Z`, seconds since 2001.",
             "let x = 1 // fine"].joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let r = CLIFixture.exec(Self.root + "/scripts/check-comments", [file])
        #expect(r.status == 1)
        let lines = r.stdout.split(separator: "\n").map { String($0.dropFirst(file.count + 1)) }
        #expect(lines.map { $0.components(separatedBy: "): ")[0] }
                == ["1: a lab note (4-7 µs", "2: a lab note (60 ms", "3: a lab note (2026-11-29"], "\(r.stdout)")
    }

    @Test func readmeStaysShort() throws {
        let lines = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 260, "README.md has \(lines) lines; the details belong in docs/")
    }
}
