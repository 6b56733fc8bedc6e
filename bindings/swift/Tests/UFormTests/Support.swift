// What several of the Swift test files need: the `UFormError` a call throws, a scratch folder, and where a fixture
// folder of tests/fixtures is.

import Foundation
import XCTest
@testable import UForm

/// The `UFormError` `body` throws; nil when it throws nothing, or something else.
func thrown(_ body: () throws -> Void) -> UFormError? {
    do {
        try body()
    } catch let error as UFormError {
        return error
    } catch {
        return nil
    }
    return nil
}

/// The same for a call that is `async`: `Model.loadRam`, `encodeText`, `encodeImage` and `step` are `async throws`.
func thrownAsync(_ body: () async throws -> Void) async -> UFormError? {
    do {
        try await body()
    } catch let error as UFormError {
        return error
    } catch {
        return nil
    }
    return nil
}

/// A fresh folder `uform-PREFIX-NAME-UUID` in the temporary directory.
func temporaryFolder(_ prefix: String, _ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("uform-\(prefix)-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The fixture folder `folder` of tests/fixtures (families, images): the one `variable` names, else TestModel/`folder`
/// beside the package (`cargo xtask package swift --out DIR` copies it there), else beside UFORM_TEST_REFERENCE
/// (`../folder`), the first holding reference.json. Nil, the test failed, when none does.
func fixtureRoot(_ variable: String, _ folder: String, file: StaticString = #filePath, line: UInt = #line) -> URL? {
    let env = ProcessInfo.processInfo.environment
    let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    var candidates: [URL] = []
    if let path = env[variable] { candidates.append(URL(fileURLWithPath: path)) }
    candidates.append(package.appendingPathComponent("TestModel").appendingPathComponent(folder))
    if let path = env["UFORM_TEST_REFERENCE"] {
        candidates.append(URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(folder))
    }
    guard let root = candidates.first(where: {
        FileManager.default.fileExists(atPath: $0.appendingPathComponent("reference.json").path)
    }) else {
        XCTFail("no \(folder) fixture in \(candidates.map { $0.path }): set \(variable), or use the folder `cargo xtask package swift --out DIR` makes",
                file: file, line: line)
        return nil
    }
    return root
}
