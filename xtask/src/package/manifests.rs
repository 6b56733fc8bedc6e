//! The manifests `cargo xtask package swift` writes. All use tools 6.2 (static-library artifact bundles on Linux,
//! SE-0482), no `unsafeFlags` and no environment reads, so SwiftPM accepts the package as a versioned dependency.
//! The repository's own Package.swift is written by hand with the same targets over the repository's paths.

/// The package in the self-contained folder's layout (Sources/, Tests/), `ffi` being its `UFormFFI` binary target.
fn package(header: &str, ffi: &str) -> String {
    format!(
        r#"// swift-tools-version:6.2
{header}

import PackageDescription

let package = Package(
    name: "UForm",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "UForm", targets: ["UForm"]),
        .executable(name: "uform-swift-bench", targets: ["UFormBench"]),
    ],
    targets: [
        {ffi},
        .target(name: "UForm", dependencies: ["UFormFFI"], swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "UFormBench", dependencies: ["UForm", "UFormFFI"], swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "UFormTests", dependencies: ["UForm"], swiftSettings: [.swiftLanguageMode(.v5)]),
    ]
)
"#
    )
}

/// The folder's manifest: the bundle next to it, by path.
pub fn folder() -> String {
    package(
        "// The Swift package `UForm`, self-contained: the generated Swift over the C module `UFormFFI`, a static-library\n\
         // artifact bundle next to this file. Written by `cargo xtask package swift --out DIR`; needs no Rust.",
        &format!(".binaryTarget(name: \"UFormFFI\", path: \"{}\")", super::BUNDLE),
    )
}

/// The released manifest: the bundle's zip by URL and SwiftPM checksum (SHA-256 of the zip).
pub fn released(url: &str, checksum: &str) -> String {
    package(
        "// The Swift package `UForm` as a release publishes it: the same package as the folder's Package.swift, with\n\
         // the bundle's zip downloaded by URL and verified by checksum. Written by `cargo xtask package swift`.",
        &format!(".binaryTarget(\n            name: \"UFormFFI\",\n            url: \"{url}\",\n            checksum: \"{checksum}\"\n        )"),
    )
}

/// A user's package: depends on the folder through its git URL and version tag, as users depend on packages.
pub fn consumer(folder_url: &str, identity: &str, version: &str) -> String {
    format!(
        r#"// swift-tools-version:6.2
// A user's package: depends on UForm through a versioned git URL (not by path, which would allow what a versioned
// dependency may not). Written by `cargo xtask package swift --out DIR`; `swift run` here builds and runs it.

import PackageDescription

let package = Package(
    name: "Consumer",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(url: "{folder_url}", from: "{version}"),
    ],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [.product(name: "UForm", package: "{identity}")]),
    ]
)
"#
    )
}

/// The consumer's program, in Swift 6 language mode: the calls of the reference page, `Mesh.bootstrap` awaited.
pub const CONSUMER_MAIN: &str = r#"// Uses UForm as the reference page documents it: capabilities, an executor, a mesh of one, errors as enum cases.

import UForm

let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
let mesh = try await Mesh.bootstrap(executor: executor)
let description = try mesh.describe()
do {
    _ = try Executor.forRam(config: ExecutorForRamConfig(threads: 0))
    fatalError("threads: 0 was accepted")
} catch UFormError.InvalidArgument(let message) {
    print("consumer: threads 0 refused: \(message)")
}
try mesh.free()
try executor.free()
print("consumer: capabilities \(capabilitiesCompiled()); a mesh of \(description.hostDomainCount) host")
"#;
