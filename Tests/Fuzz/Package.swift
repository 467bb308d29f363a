// swift-tools-version: 6.1
//
// libFuzzer targets for framerated (docs/security.md, "Fuzzing"). Built only by `make fuzz`
// and `make fuzz-smoke` (Tests/Fuzz/run.sh), with every module instrumented:
//
//   swift build -c release --package-path Tests/Fuzz -Xswiftc -sanitize=fuzzer,address
//
// Each target is an ordinary executable whose `main.swift` hands its test function to
// libFuzzer's `LLVMFuzzerRunDriver`, so it takes libFuzzer's usual flags and corpus
// directories. Seed corpora live in Tests/Fuzz/corpus/<target>/.
import PackageDescription

let settings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "framerated-fuzz",
    dependencies: [
        .package(name: "framerated", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .target(name: "CLibFuzzer", path: "CLibFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CLibFuzzer"],
            path: "FuzzSupport",
            swiftSettings: settings
        ),
        .executableTarget(
            name: "JSONFraming",
            dependencies: [
                "FuzzSupport",
                .product(name: "FrameRateProtocol", package: "framerated"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "JSONFraming",
            swiftSettings: settings
        ),
        .executableTarget(
            name: "JSONRPCEnvelope",
            dependencies: [
                "FuzzSupport",
                .product(name: "FrameRateProtocol", package: "framerated"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "JSONRPCEnvelope",
            swiftSettings: settings
        ),
        // The whole dispatcher (bytes in, replies out, over a real model), on the in-process
        // daemon of FrameRateTesting; its seeds (a script per method) in corpus/Dispatcher/.
        .executableTarget(
            name: "Dispatcher",
            dependencies: [
                "FuzzSupport",
                .product(name: "FrameRateTesting", package: "framerated"),
                .product(name: "FrameRateProtocol", package: "framerated"),
                .product(name: "FrameRateModel", package: "framerated"),
            ],
            path: "Dispatcher",
            swiftSettings: settings
        ),
    ]
)
