#if canImport(Glibc)
import Glibc
#endif
import FrameRateModel
import FrameRateProtocol
import Foundation
import Testing

private let canRunAsNobody: Bool =
    getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") && getpwnam("nobody") != nil

/// Issue 10 §3 with real processes of two users: root's link and nobody's link on one
/// daemon; each user's framectl shows its own link in full and the other's without a holder.
@Suite("Private by default (separate processes, two users)", .serialized)
struct PrivacyIntegrationTests {
    @Test("nobody sees its own link's pid and label, not root's; root sees both", .enabled(if: canRunAsNobody))
    func twoUsers() async throws {
        let daemon = try await Daemon.start()
        defer { daemon.kill() }
        let rootClient = try daemon.rawClient("hold", ["--min", "80", "--max", "120", "--preferred", "120", "--entitled", "--label", "root-secret"])
        defer { rootClient.signal(SIGKILL) }
        #expect(await rootClient.firstLine { $0.contains("registered") } != nil)
        // setpriv execs framectl itself (runuser forks it and waits), so the SIGKILL below
        // reaches framectl: killing runuser left it reconnecting to the dead daemon for good.
        let nobody = getpwnam("nobody")!.pointee
        let nobodyClient = try TestProcess(
            executable: "/usr/bin/setpriv",
            arguments: [
                "--reuid=\(nobody.pw_uid)", "--regid=\(nobody.pw_gid)", "--clear-groups", Paths.framectl, "register", "--min", "30", "--max", "60",
                "--label", "mine", "--socket", daemon.socket,
            ],
            stderrURL: daemon.directory.appendingPathComponent("framectl-nobody-register.log")
        )
        defer { nobodyClient.signal(SIGKILL) }
        try #require(await nobodyClient.firstLine { $0.hasPrefix("tick ") } != nil, "nobody's link never ticked: \(nobodyClient.stderr)")

        let asNobody = try await daemon.framectl(["status", "--json"], user: "nobody")
        try #require(asNobody.status == 0, "\(asNobody.stderr)")
        let seen = try JSONValue(parsing: try #require(asNobody.stdout.first))
        let links = try #require(seen["displays"]?[0]?["links"]?.arrayValue)
        try #require(links.count == 2, "\(links)")
        let root = try #require(links.first { $0["range"]?["maximum"] == 120.0 })
        let own = try #require(links.first { $0["range"]?["maximum"] == 60.0 })
        for field in ["pid", "uid", "command", "label"] { #expect(root[field] == .null, "root's \(field): \(root)") }
        #expect(own["uid"] == 65534 && own["label"] == "mine" && own["command"] == "framectl", "\(own)")
        let reason = try #require(seen["displays"]?[0]?["reason"]?.stringValue)
        #expect(!reason.contains("root-secret") && !(seen["displays"]?[0]?["decision"]?.jsonString.contains("root-secret") ?? true), "\(reason)")

        // The text view: '-' where the holder is hidden.
        let text = try await daemon.framectl(["status"], user: "nobody")
        #expect(text.status == 0, "\(text.stderr)")
        let rootRow = try #require(text.stdout.first { $0.hasPrefix("    1 ") }, "\(text.stdout)")
        #expect(rootRow.split(separator: " ", omittingEmptySubsequences: true).filter { $0 == "-" }.count >= 3, "\(rootRow)")
        #expect(!text.stdout.joined(separator: "\n").contains("root-secret"))

        // Root sees both holders and both labels.
        let asRoot = try await daemon.framectl(["status", "--json"])
        let state = try CompositorState(json: try JSONValue(parsing: try #require(asRoot.stdout.first)))
        let all = try #require(state.displays.first).links
        #expect(Set(all.compactMap(\.label)) == ["root-secret", "mine"])
        #expect(Set(all.compactMap { $0.peer?.uid }) == [0, 65534])
        #expect(all.first { $0.label == "root-secret" }?.peer?.pid == rootClient.pid)
    }
}
