// swift-tools-version: 6.1
//
// framerated: a frame-rate hint broker for Linux.
//
// Layers, each depending only on the ones above it in this list:
//   UntrustedText      pure: showing untrusted text in errors and logs (escaping, shortening)
//   FrameRateModel     pure values and state machines (no I/O, no NIO, time injected)
//   FrameRateProtocol  JSON, JSON-RPC 2.0 envelope, gRPC status, NDJSON framing, v1 messages
//   FrameRateServer    SwiftNIO Unix-socket server, sessions, tick fan-out, run as a Service
//   FrameRateClient    async Swift client (framectl and the integration tests use it)
//   FrameRateVersion   the version and the build's git commit (through CFrameRateBuildInfo)
//   framerated/framectl  thin executables
//   framebench         the load generator and control-plane benchmarks (docs/performance.md), on
//                      FrameRateClient's low-level session layer
import PackageDescription

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The git commit for `--version` and the daemon's Health/Check (see
/// Sources/FrameRateVersion/FrameRateVersion.swift): the Makefile exports
/// FRAMERATED_GIT_COMMIT; only letters, digits, `.`, `+` and `-` are kept, so that it is
/// a safe C string literal. Unset (a tarball or a bare `swift build`): no commit.
let buildCommit: String = {
    guard let raw = getenv("FRAMERATED_GIT_COMMIT") else { return "" }
    let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+-")
    return String(String(cString: raw).filter { allowed.contains($0) }.prefix(64))
}()

/// One settings list for every target, so the whole package is built the same way.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "framerated",
    products: [
        .executable(name: "framerated", targets: ["framerated"]),
        .executable(name: "framectl", targets: ["framectl"]),
        .executable(name: "framebench", targets: ["framebench"]),
        .library(name: "FrameRateModel", targets: ["FrameRateModel"]),
        .library(name: "FrameRateProtocol", targets: ["FrameRateProtocol"]),
        .library(name: "FrameRateClient", targets: ["FrameRateClient"]),
        // Test support, kept out of the production modules (as NIO ships NIOEmbedded and
        // Hummingbird HummingbirdTesting): the stepped clock for time-dependent logic, and
        // the embedded server harness (a whole daemon in-process, stepped by hand) that the
        // server tests and the dispatcher fuzz target drive.
        .library(name: "FrameRateTesting", targets: ["FrameRateTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        .target(
            name: "UntrustedText",
            swiftSettings: strictSettings
        ),
        .target(
            name: "FrameRateModel",
            dependencies: ["UntrustedText"],
            // Full cross-module optimization in release builds: the model is generic over its
            // clock, and the tick plane (FrameRateServer) must be able to specialize its
            // per-vsync pacing for the monotonic clock instead of calling it through witness
            // tables and run-time generic metadata on every tick.
            swiftSettings: strictSettings + [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]
        ),
        .target(
            name: "FrameRateProtocol",
            dependencies: [
                "FrameRateModel",
                "UntrustedText",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CFrameRatePosix",
            // liburing (Debian's liburing-dev): the tick plane's batched sends.
            linkerSettings: [.linkedLibrary("uring")]
        ),
        .target(
            name: "CFrameRateBuildInfo",
            cSettings: buildCommit.isEmpty ? [] : [.define("FRAMERATED_GIT_COMMIT", to: "\"\(buildCommit)\"")]
        ),
        .target(
            name: "FrameRateVersion",
            dependencies: ["CFrameRateBuildInfo"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FrameRatePosix",
            dependencies: [
                "CFrameRatePosix",
                "FrameRateProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FrameRateServer",
            dependencies: [
                "FrameRatePosix",
                "FrameRateModel",
                "FrameRateProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(
            name: "FrameRateSystemd",
            dependencies: [
                "CSystemd",
                "UntrustedText",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FrameRateClient",
            dependencies: [
                "FrameRateModel",
                "FrameRateProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "framerated",
            dependencies: [
                "FrameRateVersion",
                "FrameRateModel",
                "FrameRatePosix",
                "FrameRateProtocol",
                "FrameRateServer",
                "FrameRateSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "framectl",
            dependencies: [
                "FrameRateVersion",
                "FrameRateModel",
                "FrameRateProtocol",
                "FrameRateClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "framebench",
            dependencies: [
                "FrameRateVersion",
                "FrameRatePosix",
                "FrameRateModel",
                "FrameRateProtocol",
                "FrameRateClient",
                // `tick-cost` steps the real tick plane in process, through the tests' server harness.
                "FrameRateServer",
                "FrameRateTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FrameRateTesting",
            dependencies: [
                "FrameRateServer", "FrameRatePosix", "FrameRateProtocol", "FrameRateModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "UntrustedTextTests",
            dependencies: ["UntrustedText"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FrameRateModelTests",
            dependencies: ["FrameRateModel", "FrameRateTesting"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FrameRateProtocolTests",
            dependencies: [
                "FrameRateProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FrameRateServerTests",
            dependencies: [
                "FrameRateTesting",
                "FrameRateServer", "FrameRateProtocol", "FrameRateModel", "FrameRatePosix",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FrameRatePosixTests",
            dependencies: [
                "FrameRatePosix",
                "FrameRateProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FrameRateSystemdTests",
            dependencies: [
                "FrameRateSystemd", "FrameRateModel",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FrameRateClientTests",
            dependencies: [
                "FrameRateClient", "FrameRateProtocol", "FrameRateModel", "FrameRateTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FramectlTests",
            dependencies: ["framectl", "FrameRateClient", "FrameRateProtocol", "FrameRateModel"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FramebenchTests",
            dependencies: [
                "framebench", "FrameRateClient", "FrameRateProtocol", "FrameRateModel", "FrameRateTesting",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["FrameRateClient", "FrameRateProtocol", "FrameRateModel", "FrameRatePosix"],
            exclude: ["Scripts"],
            swiftSettings: strictSettings
        ),
    ]
)
