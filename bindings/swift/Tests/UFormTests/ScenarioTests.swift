// The scenario list (SCENARIOS.md) in Swift: each test is numbered after the scenario it covers.
// Runs on a machine without a GPU; the GPU paths are checked for what happens without one.

import Foundation
import XCTest
@testable import UForm

/// GPU classes appear in the capability lists too; only CPU classes are valid as `cpuClass`.
private func isGpuClass(_ name: Substring) -> Bool {
    name.hasPrefix("nvidia-") || name.hasPrefix("amd-cdna") || name.hasPrefix("amd-rdna")
}

private func cpuClasses() -> [String] {
    capabilitiesAvailable().split(separator: ",").filter { !isGpuClass($0) }.map(String.init)
}

/// What a call threw (`nil`: nothing) as a `UFormError`; fails the test when it threw nothing or something else.
private func expectUFormError(_ thrown: Error?, file: StaticString, line: UInt) -> UFormError? {
    if let error = thrown as? UFormError {
        return error
    }
    XCTFail(thrown.map { "expected a UFormError, got \($0)" } ?? "expected a UFormError", file: file, line: line)
    return nil
}

/// The case of a thrown `UFormError` and its message; fails the test for anything else.
private func uformError(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> UFormError? {
    do { try body() } catch { return expectUFormError(error, file: file, line: line) }
    return expectUFormError(nil, file: file, line: line)
}

/// The same for a call that is `async`, like `Mesh.bootstrap`.
private func uformErrorAsync(_ body: () async throws -> Void, file: StaticString = #filePath, line: UInt = #line) async -> UFormError? {
    do { try await body() } catch { return expectUFormError(error, file: file, line: line) }
    return expectUFormError(nil, file: file, line: line)
}

/// A result handed from one thread to another; every access holds the lock.
private final class Handoff<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T

    init(_ value: T) {
        self.value = value
    }

    func update(_ change: (inout T) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        change(&value)
    }

    func get() -> T {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}

/// Runs an `async` call to completion from a plain `Thread` (never from a thread of Swift's cooperative pool, which
/// it would block): the call runs as a task and only suspends while the library works on its own thread.
private func waitFor<T>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let result = Handoff<Result<T, Error>?>(nil)
    Task {
        do {
            let value = try await body()
            result.update { $0 = .success(value) }
        } catch {
            result.update { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try result.get()!.get()
}

private func message(_ error: UFormError?) -> String {
    switch error {
    case .InvalidArgument(let m), .Unsupported(let m), .Unavailable(let m), .Timeout(let m), .InUse(let m),
         .Conflict(let m), .OutOfMemory(let m), .Io(let m), .Device(let m), .FreedHandle(let m), .Internal(let m):
        return m
    case nil:
        return ""
    }
}

private func scratchDirectory(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("uform-swift-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

final class ScenarioTests: XCTestCase {
    // MARK: Discovery

    func test01CapabilitiesAreNonEmptyCommaSeparatedNames() {
        for list in [capabilitiesCompiled(), capabilitiesAvailable()] {
            XCTAssertFalse(list.isEmpty)
            XCTAssertFalse(list.contains(" "), list)
            XCTAssertTrue(list.split(separator: ",", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }, list)
        }
    }

    func test02EveryAvailableCpuClassIsAcceptedAndAnUnknownOneListsTheAcceptedNames() throws {
        let classes = cpuClasses()
        XCTAssertFalse(classes.isEmpty)
        for name in classes {
            let executor = try Executor.forRam(config: ExecutorForRamConfig(cpuClass: name, threads: 1))
            try executor.drain()
            try executor.free()
        }
        let error = uformError { _ = try Executor.forRam(config: ExecutorForRamConfig(cpuClass: "intel-pentium-pro")) }
        guard case .InvalidArgument = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message(error).contains("intel-pentium-pro"))
        XCTAssertTrue(message(error).contains("cpuClass"))
    }

    func test03GpuDevicesIsEmptyWithoutADriver() {
        let devices = gpuDevices()
        // Without a GPU device node no driver lists a GPU; UFORM_EXPECT_GPUS=1 or 0 says what to expect instead.
        let expect = ProcessInfo.processInfo.environment["UFORM_EXPECT_GPUS"]
        let nodes = ["/dev/nvidiactl", "/dev/kfd"].contains { FileManager.default.fileExists(atPath: $0) }
        if expect == "1" { XCTAssertFalse(devices.isEmpty, "UFORM_EXPECT_GPUS=1 but gpuDevices() is empty") }
        if expect == "0" || (expect == nil && !nodes) { XCTAssertEqual(devices, []) }
        for device in devices { XCTAssertTrue(device.memoryBytes > 0 && !device.name.isEmpty, "\(device)") }
    }

    func test04EnumValues() {
        let tiers: [MultimemTier] = [.switchReduced, .peerRead]
        XCTAssertEqual(tiers.count, 2)
        let vendors: [GpuVendor] = [.unknown, .nvidia, .amd, .apple]
        XCTAssertEqual(Set(vendors).count, 4)
        let moods: [Mood] = [.parked, .spinning]
        XCTAssertNotEqual(moods[0], moods[1])
    }

    // MARK: Executor life cycle

    func test05ForRamWithNoConfigAndWithEveryFieldSetThenDrainInEveryMood() throws {
        let executor = try Executor.forRam()
        try executor.drain()
        try executor.drain(mood: .parked)
        try executor.drain(mood: .spinning)
        try executor.free()
        let full = ExecutorForRamConfig(memoryDomains: [0], cpuClass: cpuClasses().first, threads: 2, deferredLimit: 16)
        let configured = try Executor.forRam(config: full)
        try configured.drain(mood: .spinning)
        try configured.free()
    }

    func test06FreeTwiceIsFineAndAnyOtherCallAfterFreeIsAFreedHandleError() throws {
        let executor = try Executor.forRam()
        try executor.free()
        try executor.free()
        let error = uformError { try executor.drain() }
        guard case .FreedHandle = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message(error).contains("drain"))
    }

    func test07ReleasingTheLastReferenceFreesTheExecutor() throws {
        weak var weakExecutor: Executor?
        do {
            let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
            defer { try? executor.free() }
            weakExecutor = executor
            try executor.drain()
        }
        XCTAssertNil(weakExecutor, "deinit ran at the end of the scope")
    }

    func test08BadConfigsAreInvalidArgumentErrorsNamingTheArgumentAndValue() {
        let zero = uformError { _ = try Executor.forRam(config: ExecutorForRamConfig(threads: 0)) }
        guard case .InvalidArgument = zero else { return XCTFail("\(String(describing: zero))") }
        XCTAssertTrue(message(zero).contains("threads"))
        let node = uformError { _ = try Executor.forRam(config: ExecutorForRamConfig(memoryDomains: [4096])) }
        guard case .InvalidArgument = node else { return XCTFail("\(String(describing: node))") }
        XCTAssertTrue(message(node).contains("4096"))
        let cpu = uformError { _ = try Executor.forRam(config: ExecutorForRamConfig(cpuClass: "arm-cortex-m0")) }
        guard case .InvalidArgument = cpu else { return XCTFail("\(String(describing: cpu))") }
        // Negative and fractional counts cannot be expressed: counts are UInt32.
    }

    func test09OnPoolIsUnsupported() {
        let error = uformError { _ = try Executor.onPool(pool: 0x1000) }
        guard case .Unsupported = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(message(error).contains("ForkUnion"))
    }

    func test10ForVramWithoutGpusIsUnavailableAndItsBadArgumentsAreEachTheDocumentedError() {
        if gpuDevices().isEmpty {
            let none = uformError { _ = try Executor.forVram() }
            guard case .Unavailable = none else { return XCTFail("\(String(describing: none))") }
        } else {
            XCTAssertNoThrow(try Executor.forVram(config: ExecutorForVramConfig(devices: [0])).free())
        }
        let streams = uformError { _ = try Executor.forVram(config: ExecutorForVramConfig(devices: [0, 1], streams: [0x10])) }
        guard case .InvalidArgument = streams else { return XCTFail("\(String(describing: streams))") }
        let gpuClass = uformError { _ = try Executor.forVram(config: ExecutorForVramConfig(gpuClass: "nvidia-voodoo")) }
        guard case .InvalidArgument = gpuClass else { return XCTFail("\(String(describing: gpuClass))") }
        let far = uformError { _ = try Executor.forVram(config: ExecutorForVramConfig(devices: [7])) }
        switch far {
        case .InvalidArgument, .Unavailable: break
        default: XCTFail("\(String(describing: far))")
        }
    }

    // MARK: Mesh

    func test11AMeshOfOneProcessWithARamExecutor() async throws {
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        let mesh = try await Mesh.bootstrap(executor: executor)
        let description = try mesh.describe()
        XCTAssertEqual(description.hostDomainIndex, 0)
        XCTAssertEqual(description.hostDomainCount, 1)
        XCTAssertEqual(description.gpus, [])
        XCTAssertTrue([MultimemTier.switchReduced, .peerRead].contains(description.multimemTier))
        try mesh.free()
        try mesh.free()
        guard case .FreedHandle = uformError({ _ = try mesh.describe() }) else { return XCTFail() }
        try executor.free()
    }

    func test12PeersWithoutDirectoryOrJobABadJobNameAnIndexOutsideTheCountAreInvalid() async throws {
        let dir = try scratchDirectory("invalid")
        defer { try? FileManager.default.removeItem(at: dir) }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        defer { try? executor.free() }
        let noDirectory = await uformErrorAsync { _ = try await Mesh.bootstrap(executor: executor, options: MeshOptions(hostDomainCount: 2, job: "job")) }
        guard case .InvalidArgument = noDirectory else { return XCTFail() }
        XCTAssertTrue(message(noDirectory).contains("directory"))
        let noJob = await uformErrorAsync { _ = try await Mesh.bootstrap(executor: executor, options: MeshOptions(hostDomainCount: 2, directory: dir.path)) }
        guard case .InvalidArgument = noJob else { return XCTFail() }
        for bad in ["", "a/b", "..", "."] {
            let error = await uformErrorAsync { _ = try await Mesh.bootstrap(executor: executor, options: MeshOptions(hostDomainCount: 2, directory: dir.path, job: bad)) }
            guard case .InvalidArgument = error else { return XCTFail(bad) }
        }
        let index = await uformErrorAsync {
            _ = try await Mesh.bootstrap(executor: executor, options: MeshOptions(hostDomainIndex: 2, hostDomainCount: 2, directory: dir.path, job: "index"))
        }
        guard case .InvalidArgument = index else { return XCTFail() }
    }

    func test13APeerThatNeverComesTimesOutAfterOneSecondAndLeavesNothingBehind() async throws {
        let dir = try scratchDirectory("timeout")
        defer { try? FileManager.default.removeItem(at: dir) }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        defer { try? executor.free() }
        let options = MeshOptions(hostDomainIndex: 0, hostDomainCount: 2, directory: dir.path, job: "lonely", timeoutSeconds: 1)
        let started = Date()
        let error = await uformErrorAsync { _ = try await Mesh.bootstrap(executor: executor, options: options) }
        guard case .Timeout = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.9)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    func test14FourPeersMeetInOneDirectoryAgreeAndLeaveNoJobDirectory() throws {
        // Swift has no portable way to re-launch the test bundle as a child, so the four peers are four threads of
        // this process, each with its own executor; the rendezvous is the same files a multi-process run uses.
        // One `Thread` per peer: every peer must be waiting at once, so nothing may cap how many run at a time at
        // the core count (`DispatchQueue.concurrentPerform` does: on two cores peers 2 and 3 started only after 0
        // and 1 had timed out).
        let dir = try scratchDirectory("four")
        defer { try? FileManager.default.removeItem(at: dir) }
        let count: UInt32 = 4
        let lines = Handoff([String](repeating: "", count: Int(count)))
        let finished = DispatchGroup()
        for index in 0..<Int(count) {
            finished.enter()
            let peer = Thread {
                defer { finished.leave() }
                let line: String
                do {
                    let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
                    let options = MeshOptions(hostDomainIndex: UInt32(index), hostDomainCount: count, directory: dir.path, job: "four", timeoutSeconds: 60)
                    let mesh = try waitFor { try await Mesh.bootstrap(executor: executor, options: options) }
                    let d = try mesh.describe()
                    try mesh.free()
                    try executor.free()
                    line = "\(d.hostDomainIndex) \(d.hostDomainCount) \(d.multimemDomainCount) \(d.multimemTier)"
                } catch {
                    line = "failed: \(error)"
                }
                lines.update { $0[index] = line }
            }
            peer.name = "peer \(index)"
            peer.start()
        }
        XCTAssertEqual(finished.wait(timeout: .now() + 90), .success, "the peers did not all return")
        let results = lines.get()
        for (index, line) in results.enumerated() {
            XCTAssertTrue(line.hasPrefix("\(index) \(count) "), line)
        }
        XCTAssertEqual(Set(results.map { $0.split(separator: " ").dropFirst().joined(separator: " ") }).count, 1, "\(results)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("four").path))
    }

    func test15FreeingTheExecutorUnderALiveMeshIsRefusedAsInUse() async throws {
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        do {
            let mesh = try await Mesh.bootstrap(executor: executor)
            guard case .InUse = uformError({ try executor.free() }) else { return XCTFail() }
            try executor.drain()
            _ = try mesh.describe()
        }
        // The mesh went out of scope: deinit freed it, so nothing borrows the executor any more.
        try executor.free()
    }

    // MARK: Errors and values

    func test16EveryErrorCarriesItsKindAsAnEnumCaseAndAMessageNamingArgumentAndValue() {
        let error = uformError { _ = try Executor.forRam(config: ExecutorForRamConfig(threads: 0)) }
        guard case .InvalidArgument(let text) = error else { return XCTFail() }
        XCTAssertTrue(text.contains("`config.threads`"), text)
        XCTAssertTrue(text.contains("0"), text)
    }

    func test17RecordsCompareAndPrintTheSwiftWay() {
        let a = MeshOptions(directory: "/tmp/x", job: "run")
        let b = MeshOptions(directory: "/tmp/x", job: "run")
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a, MeshOptions(directory: "/tmp/x", job: "other"))
        XCTAssertTrue(String(describing: a).contains("run"))
        XCTAssertEqual(MeshOptions().timeoutSeconds, 120)
        XCTAssertNil(ExecutorForRamConfig().threads)
    }
}
