// swift-tools-version:5.9
// The Swift package `UForm`: the uniffi-generated Swift in generated/swift/Sources/UForm over the C module
// `UFormFFI` (the generated FFI header and its module map), linked against the native library
// libuform_uniffi built by `cargo build -p uform-uniffi` into target/debug (or target/release: set
// UFORM_NATIVE_DIR). On a machine with Swift: `cargo build -p uform-uniffi && swift build && swift test`.

import Foundation
import PackageDescription

let nativeDirectory = ProcessInfo.processInfo.environment["UFORM_NATIVE_DIR"] ?? "target/debug"

let package = Package(
    name: "UForm",
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .library(name: "UForm", targets: ["UForm"]),
    ],
    targets: [
        .systemLibrary(
            name: "UFormFFI",
            path: "generated/swift/Sources/UFormFFI"
        ),
        .target(
            name: "UForm",
            dependencies: ["UFormFFI"],
            path: "generated/swift/Sources/UForm",
            linkerSettings: [
                .linkedLibrary("uform_uniffi"),
                .unsafeFlags(["-L", nativeDirectory, "-Xlinker", "-rpath", "-Xlinker", nativeDirectory]),
            ]
        ),
        .testTarget(
            name: "UFormTests",
            dependencies: ["UForm"],
            path: "bindings/swift/Tests/UFormTests"
        ),
    ]
)
