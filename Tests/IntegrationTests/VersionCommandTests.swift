import FrameRateProtocol
import Testing

/// `--version` of the binaries, `framectl health --json` and `framectl describe --openrpc`
/// against a real daemon: all report the same version.
@Suite("versions and discovery through framectl")
struct VersionCommandTests {
    @Test("framectl --version and the daemon's health --json agree")
    func versions() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let version = try await daemon.framectl(["--version"])
        #expect(version.status == 0, "\(version.stderr)")
        let line = try #require(version.stdout.first)
        // "framectl 0.9.0" or "framectl 0.9.0 (git 1a2b3c4d5e6f)"
        let words = line.split(separator: " ")
        #expect(words.first == "framectl" && words.count >= 2, "\(line)")
        let semantic = words.count >= 2 ? String(words[1]) : ""
        #expect(semantic.split(separator: ".").count == 3 && semantic.allSatisfy { $0.isNumber || $0 == "." }, "\(line)")

        let health = try await daemon.framectl(["health", "--json"])
        #expect(health.status == 0, "\(health.stderr)")
        let result = try JSONValue(parsing: try #require(health.stdout.first))
        #expect(result["status"] == "SERVING")
        let reported = try #require(DaemonVersion(result: result), "\(result.jsonString)")
        #expect(reported.semantic == semantic)
        #expect("framectl " + reported.description == line, "the same build: the same version and commit")
    }

    @Test("describe --openrpc prints the rpc.discover document")
    func openRPC() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let run = try await daemon.framectl(["describe", "--openrpc"])
        #expect(run.status == 0, "\(run.stderr)")
        let document = try JSONValue(parsing: try #require(run.stdout.first))
        #expect(document["openrpc"] == .string(OpenRPCDocument.specificationVersion))
        let names = try #require(document["methods"]?.arrayValue).compactMap { $0["name"]?.stringValue }
        #expect(names.contains(V1Method.register.rawValue))
        let both = try await daemon.framectl(["describe", "--openrpc", "--json"])
        #expect(both.status == 2)
        #expect(both.stderr.contains("--json and --openrpc exclude each other"), "\(both.stderr)")
    }
}
