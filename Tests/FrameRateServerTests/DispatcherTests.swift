import FrameRateModel
import FrameRatePosix
import FrameRateProtocol
import NIOCore
import NIOEmbedded
import Testing

@testable import FrameRateServer

/// Every v1 method's success path, through a real session pipeline.
@Suite struct DispatcherSuccessTests {
    @Test func registerAnswersLinkRatesAndDisplay() throws {
        let server = ServerHarness(start: MonotonicClock.Instant(seconds: 1000))
        let client = try server.connect()
        let params = #"{"range":{"minimum":30,"maximum":60,"preferred":60},"label":"video"}"#
        let first = try client.request(.register, params)
        #expect(
            first
                == #"{"jsonrpc":"2.0","id":1,"result":{"link":1,"refreshRate":60.0,"callbackRate":60.0,"decision":{"rate":60.0,"rule":"exact","deciders":[1],"deciderCount":1,"cap":null,"limited":[],"limitedCount":0,"pending":null,"reason":"60 Hz is the lowest rate that serves every link exactly; link 1 'video' (30, 60, 60) holds it there"},"limitedBy":null,"wanted":null,"got":null,"display":0,"timelines":1,"preferredFrameLatency":1}}"#
        )
        // The entitled link asks for 120 Hz; the answer reports the rate the display moves to.
        let entitled = #"{"range":{"minimum":80,"maximum":120,"preferred":120},"highFrameRate":true,"display":0,"paused":false}"#
        let second = try client.request(.register, entitled, id: 2)
        #expect(
            second
                == #"{"jsonrpc":"2.0","id":2,"result":{"link":2,"refreshRate":120.0,"callbackRate":120.0,"decision":{"rate":120.0,"rule":"exact","deciders":[2],"deciderCount":1,"cap":null,"limited":[],"limitedCount":0,"pending":{"rate":120.0,"at":1000.016666666},"reason":"120 Hz is the lowest rate that serves every link exactly; link 2 (80, 120, 120) holds it there"},"limitedBy":null,"wanted":null,"got":null,"display":0,"timelines":1,"preferredFrameLatency":1}}"#
        )
        #expect(server.compositor.links(of: try #require(server.core.sessions.values.first).owner).count == 2)
    }

    @Test func registerOnASecondDisplay() throws {
        let server = ServerHarness(displays: [
            DisplayConfiguration(id: DisplayID(rawValue: 0)), DisplayConfiguration(id: DisplayID(rawValue: 1), profile: .fixed60),
        ])
        let client = try server.connect()
        let result = try client.result(.register, #"{"range":{"minimum":10,"maximum":60},"display":1}"#)
        #expect(result["display"] == 1)
        #expect(result["refreshRate"] == 60.0)
    }

    @Test func updateAnswersWithoutDisplay() throws {
        let server = ServerHarness(start: MonotonicClock.Instant(seconds: 1000))
        let client = try server.connect()
        let link = try client.register(30, 60, 60)
        let updated = try client.request(.update, #"{"link":\#(link),"range":{"minimum":30,"maximum":60,"preferred":30}}"#, id: 2)
        #expect(
            updated
                == #"{"jsonrpc":"2.0","id":2,"result":{"link":1,"refreshRate":30.0,"callbackRate":30.0,"decision":{"rate":30.0,"rule":"exact","deciders":[1],"deciderCount":1,"cap":null,"limited":[],"limitedCount":0,"pending":{"rate":30.0,"at":1000.266666666},"reason":"30 Hz is the lowest rate that serves every link exactly; link 1 (30, 60, 30) holds it there"},"limitedBy":null,"wanted":null,"got":null,"timelines":1,"preferredFrameLatency":1}}"#
        )
        let paused = try client.result(.update, #"{"link":\#(link),"paused":true}"#)
        #expect(
            paused.objectValue?.keys == ["link", "refreshRate", "callbackRate", "decision", "limitedBy", "wanted", "got", "timelines", "preferredFrameLatency"]
        )
        let state = try client.result(.getState)
        #expect(state["displays"]?[0]?["links"]?[0]?["paused"] == true)
        #expect(state["displays"]?[0]?["links"]?[0]?["range"]?["preferred"] == 30.0)
    }

    @Test func invalidateRemovesTheLink() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(30, 60, 60)
        #expect(try client.request(.invalidate, #"{"link":\#(link)}"#, id: 7) == #"{"jsonrpc":"2.0","id":7,"result":{}}"#)
        #expect(server.compositor.linkCount == 0)
        #expect(server.compositor.links(of: try #require(server.core.sessions.values.first).owner).isEmpty)
        #expect(try client.result(.getState)["displays"]?[0]?["links"] == [])
    }

    @Test func frameDoneAsRequestAndAsNotification() throws {
        let server = ServerHarness()
        let client = try server.connect()
        let link = try client.register(60, 60, 60)
        try server.runNextVsync()
        let tick = try TickNotification(json: notificationParams(try #require(client.lines().first), .tick))
        #expect(tick.link.rawValue == link)

        #expect(
            try client.request(.frameDone, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#, id: 3)
                == #"{"jsonrpc":"2.0","id":3,"result":{}}"#
        )
        // As a notification: executed, never answered, not even when it fails.
        try client.send(notificationLine(.frameDone, #"{"link":\#(link),"sequence":\#(tick.sequence)}"#))
        try client.send(notificationLine(.frameDone, #"{"link":\#(link),"sequence":999}"#))
        try client.send(notificationLine(.frameDone, #"{"link":999,"sequence":1}"#))
        #expect(try client.nonTickLines().isEmpty)
    }

    @Test func getStateShowsDisplaysLinksAndHolders() throws {
        let server = ServerHarness()
        let client = try server.connect(Peers.user)
        _ = try client.register(30, 60, 60, extra: #","label":"video""#)
        let reply = try client.request(.getState)
        let result = try #require(try message(reply).result)
        let display = try #require(result["displays"]?[0])
        #expect(display.objectValue?.keys == ["id", "profile", "supportedRates", "refreshRate", "reason", "caps", "links", "decision", "residency", "uptime", "panelRate", "panelDecision"])
        #expect(display["panelRate"] == 60.0 && display["panelDecision"] == .null)
        #expect(display["id"] == 0)
        #expect(display["profile"] == "promotion-phone")
        #expect(display["supportedRates"] == [120.0, 80.0, 60.0, 48.0, 40.0, 30.0, 24.0, 20.0, 16.0, 15.0, 12.0, 10.0])
        #expect(display["refreshRate"] == 60.0)
        #expect(display["reason"]?.stringValue?.contains("link 1 'video' (30, 60, 60)") == true)
        #expect(display["caps"] == ["lowPowerMode": false, "limitFrameRate": false, "thermalState": "nominal"])
        let link = try #require(display["links"]?[0])
        #expect(
            link
                == [
                    "link": 1, "range": ["minimum": 30.0, "maximum": 60.0, "preferred": 60.0], "paused": false,
                    "callbackRate": 60.0, "label": "video", "highFrameRate": false, "pid": 202,
                    "uid": .number(JSONNumber(Int(Peers.user.uid))), "command": "app",
                    "since": .number(JSONNumber(text: WireTime.format(nanoseconds: server.clock.now.nanoseconds))!),
                    "limitedBy": nil, "wanted": nil, "got": nil, "hitches": nil, "timelines": 1, "preferredFrameLatency": 1,
                    "adaptive": false, "boostedUntil": nil, "awaitingFrame": nil,
                ]
        )
        // The typed parser the client uses reads it back.
        let state = try CompositorState(json: result)
        #expect(state.displays.map(\.links.count) == [1])
        #expect(state.displays[0].links[0].peer == PeerIdentity(pid: 202, uid: Peers.user.uid, command: "app"))
    }

    @Test func setCapsAllowedForRootTheDaemonUserAndTheAdminGroup() throws {
        let server = ServerHarness()
        let daemonUser = PeerCredentials(pid: 404, uid: server.core.daemonUserID, gid: 1, groups: [], command: "self")
        for (index, peer) in [Peers.root, Peers.admin, daemonUser].enumerated() {
            let client = try server.connect(peer)
            let limit = index % 2 == 0
            #expect(
                try client.request(.setCaps, #"{"limitFrameRate":\#(limit)}"#)
                    == #"{"jsonrpc":"2.0","id":1,"result":{"displays":[{"display":0,"caps":{"lowPowerMode":false,"limitFrameRate":\#(limit),"thermalState":"nominal"}}]}}"#,
                "peer uid \(peer.uid)"
            )
        }
        let client = try server.connect()
        let result = try client.result(.setCaps, #"{"display":0,"lowPowerMode":true,"thermalState":"critical"}"#)
        #expect(result == ["displays": [["display": 0, "caps": ["lowPowerMode": true, "limitFrameRate": true, "thermalState": "critical"]]]])
        #expect(try server.compositor.caps(of: nil) == DisplayCaps(lowPowerMode: true, limitFrameRate: true, thermalState: .critical))
    }

    @Test func setCapsWithoutDisplayChangesEveryDisplay() throws {
        let server = ServerHarness(displays: [
            DisplayConfiguration(id: DisplayID(rawValue: 0)), DisplayConfiguration(id: DisplayID(rawValue: 1), profile: .promotionPad),
        ])
        let client = try server.connect()
        let result = try client.result(.setCaps, #"{"thermalState":"serious"}"#)
        #expect(result["displays"]?.arrayValue?.compactMap { $0["display"]?.int64Value } == [0, 1])
        #expect(result["displays"]?[1]?["caps"]?["thermalState"] == "serious")
    }

    @Test func setCapsDeniedForAnUnprivilegedPeer() throws {
        let server = ServerHarness()
        let client = try server.connect(Peers.user)
        let reply = try client.request(.setCaps, #"{"lowPowerMode":true}"#)
        #expect(
            reply
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":7,"message":"only root, the daemon's user and members of the 'framerated-admin' group may change caps; ask an administrator to run: usermod -aG framerated-admin <user> (then log in again)","data":{"status":"PERMISSION_DENIED"}}}"#
        )
        #expect(try server.compositor.caps(of: nil) == DisplayCaps())
        // Without a resolvable admin group, group membership grants nothing.
        server.core.adminGroupID = nil
        let admin = try server.connect(Peers.admin)
        #expect(try admin.error(.setCaps, #"{"lowPowerMode":true}"#).grpcStatus == .permissionDenied)
    }

    @Test func watchStreamsLinkAndCapsEvents() throws {
        let server = ServerHarness()
        let watcher = try server.connect(Peers.user)
        let watched = try watcher.result(.watch)
        #expect(watched["watch"] == 1)
        #expect(watched["state"] == (try watcher.result(.getState)))

        let client = try server.connect(Peers.root)
        let link = try client.register(30, 60, 60, extra: #","label":"video""#)
        var events = try watcher.lines()
        #expect(events.count == 1)
        let added = try notificationParams(try #require(events.first), .event)
        #expect(added.objectValue?.keys == ["watch", "kind", "display", "link"])
        #expect(added["kind"] == "linkAdded")
        #expect(added["display"] == 0)
        #expect(try LinkState(json: try #require(added["link"])).link.rawValue == link)
        // An unprivileged watcher does not see who holds root's link, nor its label (PrivacyTests).
        #expect(added["link"]?["label"] == .null)
        #expect(added["link"]?["pid"] == .null)

        _ = try client.result(.update, #"{"link":\#(link),"paused":true}"#)
        events = try watcher.lines()
        #expect(try events.map { try notificationParams($0, .event)["kind"] } == ["linkUpdated"])
        #expect(try notificationParams(events[0], .event)["link"]?["paused"] == true)

        _ = try client.result(.setCaps, #"{"limitFrameRate":true}"#)
        #expect(
            try watcher.lines()
                == [
                    #"{"jsonrpc":"2.0","method":"framerate.v1.Compositor/Event","params":{"watch":1,"kind":"capsChanged","display":0,"caps":{"lowPowerMode":false,"limitFrameRate":true,"thermalState":"nominal"}}}"#
                ]
        )

        _ = try client.result(.invalidate, #"{"link":\#(link)}"#)
        #expect(
            try watcher.lines()
                == [
                    #"{"jsonrpc":"2.0","method":"framerate.v1.Compositor/Event","params":{"watch":1,"kind":"linkRemoved","display":0,"link":1,"reason":"invalidated"}}"#
                ]
        )
    }

    @Test func aConnectionMayHoldSeveralWatches() throws {
        let server = ServerHarness()
        let watcher = try server.connect()
        #expect(try watcher.result(.watch)["watch"] == 1)
        #expect(try watcher.result(.watch)["watch"] == 2)
        let client = try server.connect()
        _ = try client.register(30, 60, 60)
        let watches = try watcher.lines().map { try notificationParams($0, .event)["watch"] }
        #expect(Set(watches.compactMap { $0?.int64Value }) == [1, 2])
    }

    @Test func unwatchStopsEvents() throws {
        let server = ServerHarness()
        let watcher = try server.connect()
        _ = try watcher.result(.watch)
        #expect(try watcher.request(.unwatch, #"{"watch":1}"#, id: 9) == #"{"jsonrpc":"2.0","id":9,"result":{}}"#)
        let client = try server.connect()
        _ = try client.register(30, 60, 60)
        #expect(try watcher.lines().isEmpty)
        #expect(server.core.watchers.isEmpty)

        let again = try watcher.error(.unwatch, #"{"watch":1}"#)
        #expect(again.code == 5)
        #expect(again.message == "watch 1 does not exist on this connection")
    }

    @Test func unwatchOfAnotherConnectionsWatchIsNotFound() throws {
        let server = ServerHarness()
        let watcher = try server.connect()
        _ = try watcher.result(.watch)
        let other = try server.connect()
        #expect(try other.error(.unwatch, #"{"watch":1}"#).grpcStatus == .notFound)
        #expect(server.core.watchers.count == 1)
    }

    @Test func healthCheck() throws {
        let server = ServerHarness()
        let client = try server.connect(Peers.user)
        // The harness's server is given no version (framerated's is: VersionCommandTests).
        #expect(try client.request(.healthCheck) == #"{"jsonrpc":"2.0","id":1,"result":{"status":"SERVING"}}"#)
        for service in ["", "framerate.v1.DisplayLink", "framerate.v1.Compositor", "grpc.health.v1.Health", "framerate.v1.Reflection"] {
            #expect(try client.result(.healthCheck, #"{"service":"\#(service)"}"#) == ["status": "SERVING"])
        }
        #expect(
            try client.request(.healthCheck, #"{"service":"framerate.v2.Nope"}"#)
                == #"{"jsonrpc":"2.0","id":1,"error":{"code":5,"message":"unknown service 'framerate.v2.Nope'; known: framerate.v1.DisplayLink, framerate.v1.Compositor, framerate.v1.TickSocket, grpc.health.v1.Health, framerate.v1.Reflection","data":{"status":"NOT_FOUND"}}}"#
        )
        // An unknown service is quoted as every error quotes a client's text: invisible
        // characters named, and at most 128 characters of it.
        let hostile = "\u{202E}" + String(repeating: "s", count: 200)
        let message = try client.error(.healthCheck, JSONValue.object(["service": .string(hostile)]).jsonString).message
        #expect(message.hasPrefix("unknown service '<U+202E RIGHT-TO-LEFT OVERRIDE>" + String(repeating: "s", count: 127) + "… (203 bytes)'"), "\(message)")
        #expect(!message.unicodeScalars.contains("\u{202E}"))
    }

    @Test func listServicesListsEveryMethod() throws {
        let server = ServerHarness()
        let client = try server.connect(Peers.user)
        let result = try client.result(.listServices)
        let services = try #require(result["services"]?.arrayValue)
        #expect(services.compactMap { $0["name"]?.stringValue } == ServiceCatalog.services)
        var fullNames: [String] = []
        for service in services {
            for method in service["methods"]?.arrayValue ?? [] {
                let fullName = try #require(method["fullName"]?.stringValue)
                let known = try #require(V1Method(rawValue: fullName))
                #expect(method["name"]?.stringValue == known.method)
                #expect(service["name"]?.stringValue == known.service)
                #expect(["unary", "server-streaming", "daemon-notification", "unary-or-notification"].contains(method["kind"]?.stringValue))
                #expect(method["params"]?.arrayValue != nil)
                fullNames.append(fullName)
            }
        }
        #expect(fullNames.sorted() == V1Method.allCases.map(\.rawValue).sorted())
        #expect(result == ServiceCatalog.jsonValue)
        #expect(ServiceCatalog.listServicesResult(version: DaemonVersion(semantic: "1.2.3", commit: "abc"))["commit"] == "abc")
    }
}

extension JSONRPCClientMessage {
    /// The result of a successful response.
    var result: JSONValue? {
        guard case .response(_, .success(let result)) = self else { return nil }
        return result
    }
}
