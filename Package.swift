// swift-tools-version:6.2
// The Swift package `UForm`: the uniffi-generated Swift in generated/swift/Sources/UForm over the C module
// `UFormFFI`, a static-library artifact bundle (the native library `libuform_uniffi.a`, its FFI header and a module
// map naming the system libraries it needs). In a repository checkout the bundle is built, not committed: run
// `cargo xtask package swift` first, which writes it to target/swift/UFormNative.artifactbundle. Swift users do
// not build Rust: the released manifest (written by the same command) points at the bundle's zip by URL and
// checksum (bindings/swift/README.md). No unsafe flags and no environment reads, so this package can be a versioned
// dependency.

import PackageDescription

let package = Package(
    name: "UForm",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "UForm", targets: ["UForm"]),
        .executable(name: "uform-swift-bench", targets: ["UFormBench"]),
    ],
    targets: [
        .binaryTarget(name: "UFormFFI", path: "target/swift/UFormNative.artifactbundle"),
        .target(
            name: "UForm",
            dependencies: ["UFormFFI"],
            path: "generated/swift/Sources/UForm",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "UFormBench",
            dependencies: ["UForm", "UFormFFI"],
            path: "bindings/swift/Sources/UFormBench",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .testTarget(
            name: "UFormTests",
            dependencies: ["UForm"],
            path: "bindings/swift/Tests/UFormTests",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
