// Model and encodeText scenarios 18–25 of SCENARIOS.md in Swift, numbered after the scenario each covers, and bf16
// models (issue 33). Loading and encoding are `async throws` in Swift (the IDL's `async: true`), so every call here
// awaits: scenario 25's async form. The encode tests need UFORM_TEST_MODEL_DIR and UFORM_TEST_REFERENCE (set by the
// runner where `swift test` runs).

import Foundation
import XCTest
@testable import UForm

/// name, dtype, shape, bytes: several dtypes and shapes, a zero-sized tensor and a scalar among them.
private let tensors: [(String, String, [UInt64], UInt64)] = [
    ("encoder.weight", "F32", [2, 3], 24),
    ("embeddings", "BF16", [4], 8),
    ("position_ids", "I64", [1, 3], 24),
    ("empty", "U8", [0], 0),
    ("norm.bias", "F16", [2, 2], 8),
    ("mask", "BOOL", [3], 3),
    ("scale", "F64", [], 8),
]

private func raw(_ header: String, _ data: [UInt8]) -> Data {
    let text = Array(header.utf8)
    var length = UInt64(text.count).littleEndian
    var out = Data(bytes: &length, count: 8)
    out.append(contentsOf: text)
    out.append(contentsOf: data)
    return out
}

private func safetensors(_ list: [(String, String, [UInt64], UInt64)]) -> Data {
    var offset: UInt64 = 0
    var entries: [String] = []
    for (name, dtype, shape, bytes) in list {
        let dims = shape.map { String($0) }.joined(separator: ",")
        entries.append("\"\(name)\":{\"dtype\":\"\(dtype)\",\"shape\":[\(dims)],\"data_offsets\":[\(offset),\(offset + bytes)]}")
        offset += bytes
    }
    var header = "{\"__metadata__\":{\"format\":\"pt\"}," + entries.joined(separator: ",") + "}"
    while header.utf8.count % 8 != 0 { header += " " }
    return raw(header, (0..<Int(offset)).map { UInt8(($0 * 31 + 7) % 256) })
}

private func text(_ error: UFormError?) -> String {
    guard let error = error else { return "" }
    return String(describing: error)
}

private func temporary(_ name: String) throws -> URL {
    try temporaryFolder("model", name)
}

/// The test model's folder and the reference's texts and embeddings: the runner's variables, or the TestModel folder
/// `cargo xtask package swift --out DIR` puts beside the package. Nil, the test failed, when either is missing.
private func referenceFixture() throws -> (modelDir: String, texts: [String], embeddings: [[Double]])? {
    let env = ProcessInfo.processInfo.environment
    let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let beside = package.appendingPathComponent("TestModel")
    let modelDir = env["UFORM_TEST_MODEL_DIR"] ?? beside.appendingPathComponent("model").path
    let referencePath = env["UFORM_TEST_REFERENCE"] ?? beside.appendingPathComponent("reference.json").path
    guard FileManager.default.fileExists(atPath: modelDir + "/model.safetensors"),
          FileManager.default.fileExists(atPath: referencePath) else {
        XCTFail("no test model at \(modelDir) or no reference at \(referencePath): set UFORM_TEST_MODEL_DIR and UFORM_TEST_REFERENCE, or use the folder `cargo xtask package swift --out DIR` makes")
        return nil
    }
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: referencePath)))
    guard let reference = json as? [String: Any], let texts = reference["texts"] as? [String],
          let embeddings = reference["embeddings"] as? [[Double]] else {
        XCTFail("unreadable reference")
        return nil
    }
    return (modelDir: modelDir, texts: texts, embeddings: embeddings)
}

final class ModelTests: XCTestCase {
    private func load(_ path: String, _ executor: Executor) async throws -> Model {
        try await Model.loadRam(path: path, config: ModelLoadRamConfig(executor: executor))
    }

    private func loadBf16(_ path: String, _ executor: Executor) async throws -> Model {
        try await Model.loadRam(path: path, config: ModelLoadRamConfig(executor: executor, precision: .bf16))
    }

    private func checkDescription(_ model: Model, _ path: String, _ architecture: String?) throws {
        let d = try model.describe()
        XCTAssertEqual(d.path, path)
        XCTAssertEqual(d.format, "safetensors")
        XCTAssertEqual(d.architecture, architecture)
        XCTAssertEqual(d.residency, .ram)
        XCTAssertEqual(d.devices, [])
        XCTAssertEqual(d.tensors.map { $0.name }, tensors.map { $0.0 })
        XCTAssertEqual(d.tensors.map { $0.dtype }, tensors.map { $0.1 })
        XCTAssertEqual(d.tensors.map { $0.shape }, tensors.map { $0.2 })
        XCTAssertEqual(d.tensors.map { $0.bytes }, tensors.map { $0.3 })
        XCTAssertEqual(d.bytes, 75)
    }

    func test18VramWithoutAGpuIsUnavailable() async throws {
        try XCTSkipUnless(gpuDevices().isEmpty, "a GPU is present: scripts/gpu-check.sh covers loadVram")
        let error = thrown { _ = try Executor.forVram(config: ExecutorForVramConfig(devices: [0, 1])) }
        guard case .Unavailable = error else { return XCTFail("expected unavailable, got \(text(error))") }
        let dir = try temporary("vram")
        let file = dir.appendingPathComponent("model.safetensors")
        try safetensors(tensors).write(to: file)
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        let load = await thrownAsync {
            _ = try await Model.loadVram(path: file.path, config: ModelLoadVramConfig(executor: executor, devices: [0, 1]))
        }
        guard case .Unavailable(let message) = load else { return XCTFail("expected unavailable, got \(text(load))") }
        XCTAssertTrue(message.hasPrefix("no GPU driver") && message.contains("Model.loadRam"), message)
        try executor.free()
    }

    func test21ALoadNamingNoExecutorTakesTheDefaultExecutor() async throws {
        let dir = try temporary("default-executor")
        let file = dir.appendingPathComponent("model.safetensors")
        try safetensors(tensors).write(to: file)
        let first = try await Model.loadRam(path: file.path)
        let second = try await Model.loadRam(path: file.path, config: ModelLoadRamConfig())
        try checkDescription(first, file.path, nil)
        try checkDescription(second, file.path, nil)
        try first.free()
        try second.free()
    }

    func test19AFileItsDirectoryAndAShardedPairDescribeExactly() async throws {
        let dir = try temporary("describe")
        let file = dir.appendingPathComponent("model.safetensors")
        try safetensors(tensors).write(to: file)
        let config = dir.appendingPathComponent("config.json")
        try Data("{\"model_type\": \"bert\"}".utf8).write(to: config)
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        for path in [file.path, dir.path] {
            let model = try await load(path, executor)
            try checkDescription(model, path, "bert")
            try model.free()
        }
        try FileManager.default.removeItem(at: config)
        let bare = try await load(file.path, executor)
        try checkDescription(bare, file.path, nil)
        try bare.free()
        let sharded = dir.appendingPathComponent("sharded")
        try FileManager.default.createDirectory(at: sharded, withIntermediateDirectories: true)
        let names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
        try safetensors(Array(tensors[0..<3])).write(to: sharded.appendingPathComponent(names[0]))
        try safetensors(Array(tensors[3...])).write(to: sharded.appendingPathComponent(names[1]))
        let map = tensors.enumerated().map { "\"\($0.element.0)\": \"\(names[$0.offset < 3 ? 0 : 1])\"" }
        let index = sharded.appendingPathComponent("model.safetensors.index.json")
        try Data("{\"weight_map\": {\(map.joined(separator: ", "))}}".utf8).write(to: index)
        for path in [index.path, sharded.path] {
            let model = try await load(path, executor)
            try checkDescription(model, path, nil)
            try model.free()
        }
        try executor.free()
    }

    func test20BadFilesAreInvalidArgumentsNamingTheFile() async throws {
        let dir = try temporary("bad")
        let ok = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"
        var past = Data([0, 16, 0, 0, 0, 0, 0, 0])
        past.append(contentsOf: Array("{}".utf8))
        let cases: [(String, Data, String)] = [
            ("truncated.safetensors", Data([1, 2, 3]), "fewer than the 8-byte header length"),
            ("past.safetensors", past, "runs past the end of the file"),
            ("malformed.safetensors", raw("{\"a\": {", []), "not a JSON object of tensors"),
            ("dtype.safetensors", raw("{\"w\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", [0, 0, 0, 0]), "dtype `F33`"),
            ("shape.safetensors", raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", [UInt8](repeating: 0, count: 8)), "tensor `w`"),
            ("overlap.safetensors", raw("{\(ok),\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", [UInt8](repeating: 0, count: 8)), "overlaps tensor `a`"),
        ]
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        for (name, contents, fragment) in cases {
            let path = dir.appendingPathComponent(name)
            try contents.write(to: path)
            let error = await thrownAsync { _ = try await self.load(path.path, executor) }
            guard case .InvalidArgument(let message) = error else { XCTFail("\(name): \(text(error))"); continue }
            XCTAssertTrue(message.contains(path.path) && message.contains(fragment), message)
        }
        let empty = dir.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let emptyError = await thrownAsync { _ = try await self.load(empty.path, executor) }
        guard case .InvalidArgument(let emptyMessage) = emptyError else { return XCTFail(text(emptyError)) }
        XCTAssertTrue(emptyMessage.contains("without weights"), emptyMessage)
        let missing = dir.appendingPathComponent("not-there").path
        let io = await thrownAsync { _ = try await self.load(missing, executor) }
        guard case .Io(let ioMessage) = io else { return XCTFail(text(io)) }
        XCTAssertTrue(ioMessage.contains(missing), ioMessage)
        try executor.free()
    }

    func test21ALiveModelKeepsItsExecutorInUseAndAFreedModelRefusesCalls() async throws {
        let dir = try temporary("borrow")
        let file = dir.appendingPathComponent("m.safetensors")
        try safetensors(tensors).write(to: file)
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        let model = try await load(file.path, executor)
        guard case .InUse = thrown({ try executor.free() }) else { return XCTFail("expected in use") }
        try model.free()
        try model.free()
        guard case .FreedHandle = thrown({ _ = try model.describe() }) else { return XCTFail("expected freed") }
        guard case .FreedHandle = await thrownAsync({ _ = try await model.encodeText(texts: ["hello"]) }) else {
            return XCTFail("expected freed")
        }
        try executor.free()
        guard case .FreedHandle = await thrownAsync({ _ = try await self.load(file.path, executor) }) else {
            return XCTFail("expected freed")
        }
    }

    func test22To25EncodeTextReproducesTheReference() async throws {
        guard let fixture = try referenceFixture() else { return }
        let modelDir = fixture.modelDir, texts = fixture.texts, embeddings = fixture.embeddings
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let model = try await load(modelDir, executor)
        let m = try await model.encodeText(texts: texts)
        XCTAssertEqual(m.rows, UInt32(texts.count))
        XCTAssertEqual(m.columns, 384)
        for (r, want) in embeddings.enumerated() where m.data.count == texts.count * 384 {
            var dot = 0.0, gg = 0.0, ww = 0.0, worst = 0.0
            for c in 0..<384 {
                let g = Double(m.data[r * 384 + c])
                dot += g * want[c]
                gg += g * g
                ww += want[c] * want[c]
                worst = max(worst, abs(g - want[c]))
            }
            let cosine = dot / (gg * ww).squareRoot()
            XCTAssertTrue(cosine >= 0.9999 && worst <= 1e-4, "row \(r): cosine \(cosine), max diff \(worst)")
        }
        let none = try await model.encodeText(texts: [])
        XCTAssertEqual(none.rows, 0)
        let nul = await thrownAsync { _ = try await model.encodeText(texts: ["fine", "nul\u{0}byte"]) }
        guard case .InvalidArgument(let message) = nul else { return XCTFail(text(nul)) }
        XCTAssertTrue(message.contains("texts[1]"), message)
        let kept = try await model.encodeText(texts: Array(texts[0..<2]))
        try model.free()
        try executor.free()
        XCTAssertEqual(kept.rows, 2)
        XCTAssertEqual(kept.data.count, 768)
    }

    func testBf16ModelsEmbedNearTheReferenceButNotAsF32AndRefuseTrainingAndIcelake() async throws {
        guard let fixture = try referenceFixture() else { return }
        let classes = capabilitiesAvailable().split(separator: ",").map(String.init)
        if classes.contains("intel-icelake") {
            let icelake = try Executor.forRam(config: ExecutorForRamConfig(cpuClass: "intel-icelake", threads: 1))
            let refused = await thrownAsync { _ = try await self.loadBf16(fixture.modelDir, icelake) }
            guard case .Unsupported(let message) = refused else { return XCTFail("icelake: \(text(refused))") }
            XCTAssertTrue(message.contains("AVX512_BF16"), message)
            try icelake.free()
        }
        let bf16Classes = classes.filter { $0 == "amd-genoa" || $0 == "intel-sapphirerapids" }
        if bf16Classes.isEmpty {
            // This CPU has no bf16 instructions: its native class refuses bf16.
            let native = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
            let refused = await thrownAsync { _ = try await self.loadBf16(fixture.modelDir, native) }
            guard case .Unsupported = refused else { return XCTFail("native class: \(text(refused))") }
            try native.free()
            return
        }
        let plain = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let f32 = try await load(fixture.modelDir, plain)
        let f32Described = try f32.describe()
        XCTAssertEqual(f32Described.precision, .f32)
        let exact = try await f32.encodeText(texts: fixture.texts)
        for cpuClass in bf16Classes {
            let executor = try Executor.forRam(config: ExecutorForRamConfig(cpuClass: cpuClass, threads: 2))
            let model = try await loadBf16(fixture.modelDir, executor)
            let d = try model.describe()
            XCTAssertEqual(d.precision, .bf16)
            var matrices: UInt64 = 0
            var vectors: UInt64 = 0
            for t in d.tensors where t.dtype == "F32" {
                let values = t.shape.reduce(UInt64(1), *)
                if t.shape.count >= 2 {
                    matrices += values
                } else {
                    vectors += values
                }
            }
            XCTAssertEqual(d.weightBytes, 2 * matrices + 4 * vectors)
            XCTAssertEqual(f32Described.weightBytes, 4 * (matrices + vectors))
            XCTAssertTrue(d.weightBytes < f32Described.weightBytes, "\(d.weightBytes) bytes")
            let m = try await model.encodeText(texts: fixture.texts)
            XCTAssertEqual(m.data.count, fixture.texts.count * 384)
            for (r, want) in fixture.embeddings.enumerated() where m.data.count == fixture.texts.count * 384 {
                var dot = 0.0, gg = 0.0, ww = 0.0
                for c in 0..<384 {
                    let g = Double(m.data[r * 384 + c])
                    dot += g * want[c]
                    gg += g * g
                    ww += want[c] * want[c]
                }
                let cosine = dot / (gg * ww).squareRoot()
                XCTAssertTrue(cosine >= 0.999, "\(cpuClass) row \(r): cosine \(cosine)")
            }
            // Not f32's floats: the products really are bf16's.
            let worst = zip(m.data, exact.data).map { abs($0 - $1) }.max() ?? 0
            XCTAssertTrue(worst > 1e-5, "\(cpuClass): bf16 gave f32's embeddings")
            let refused = thrown { _ = try Trainer.contrastive(model: model) }
            guard case .Unsupported(let message) = refused else { return XCTFail("\(cpuClass) trainer: \(text(refused))") }
            XCTAssertTrue(message.contains("precision f32"), message)
            try model.free()
            try executor.free()
        }
        try f32.free()
        try plain.free()
    }
}

/// Scenarios 33–35 (issue 31): the random-weight family checkpoints of tests/fixtures/families against
/// sentence-transformers' reference, found in UFORM_TEST_FAMILIES, else in TestModel/families beside the package
/// (`cargo xtask package swift --out DIR` copies them there), else beside UFORM_TEST_REFERENCE (`../families`).
final class FamiliesTests: XCTestCase {
    private func families() throws -> (root: URL, reference: [String: [String: Any]])? {
        guard let root = fixtureRoot("UFORM_TEST_FAMILIES", "families") else { return nil }
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("reference.json")))
        guard let reference = json as? [String: [String: Any]] else {
            XCTFail("unreadable \(root.path)/reference.json")
            return nil
        }
        return (root, reference)
    }

    private func load(_ root: URL, _ family: String, _ executor: Executor) async throws -> Model {
        try await Model.loadRam(path: root.appendingPathComponent(family).path, config: ModelLoadRamConfig(executor: executor))
    }

    /// The largest |got - want| of a matrix against rows of the same shape (infinity when the shapes differ).
    private func maxDifference(_ m: F32Matrix, _ want: [[Double]]) -> Double {
        guard let width = want.first?.count, Int(m.rows) == want.count, Int(m.columns) == width,
              m.data.count == want.count * width else { return .infinity }
        var worst = 0.0
        for (r, row) in want.enumerated() {
            for (c, w) in row.enumerated() { worst = max(worst, abs(Double(m.data[r * width + c]) - w)) }
        }
        return worst
    }

    func test33EveryFamilyReproducesItsReference() async throws {
        guard let found = try families() else { return }
        let prompts = ["distilbert": ["passage", "query"], "xlm-roberta": ["document", "query"], "mpnet": ["document", "query"], "modernbert": ["document", "query"]]
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        for family in ["distilbert", "xlm-roberta", "mpnet", "modernbert"] {
            guard let texts = found.reference[family]?["texts"] as? [String],
                  let embeddings = found.reference[family]?["embeddings"] as? [[Double]] else {
                return XCTFail("unreadable \(family)")
            }
            let model = try await load(found.root, family, executor)
            let d = try model.describe()
            XCTAssertEqual(d.family, family)
            XCTAssertEqual(d.architecture, family)
            XCTAssertEqual(d.maxTokens, 64)
            XCTAssertEqual(d.dimensions, 64)
            XCTAssertFalse(d.crossEncoder)
            XCTAssertEqual(d.prompts.sorted(), prompts[family])
            let m = try await model.encodeText(texts: texts)
            XCTAssertEqual(m.rows, UInt32(texts.count))
            XCTAssertEqual(m.columns, 64)
            for (r, want) in embeddings.enumerated() where m.data.count == texts.count * 64 {
                var cosine = 0.0, worst = 0.0 // both unit length
                for c in 0..<64 {
                    let g = Double(m.data[r * 64 + c])
                    cosine += g * want[c]
                    worst = max(worst, abs(g - want[c]))
                }
                XCTAssertTrue(cosine >= 0.9999 && worst <= 1e-4, "\(family) text \(r): cosine \(cosine), max abs difference \(worst)")
            }
            try model.free()
        }
        // bf16 runs every family too, where the CPU has it (issue 33): cosine >= 0.999 for every text.
        let classes = capabilitiesAvailable().split(separator: ",").map(String.init)
        if classes.contains("amd-genoa") || classes.contains("intel-sapphirerapids") {
            for family in ["distilbert", "xlm-roberta", "mpnet", "modernbert"] {
                guard let texts = found.reference[family]?["texts"] as? [String],
                      let embeddings = found.reference[family]?["embeddings"] as? [[Double]] else {
                    return XCTFail("unreadable \(family)")
                }
                let config = ModelLoadRamConfig(executor: executor, precision: .bf16)
                let model = try await Model.loadRam(path: found.root.appendingPathComponent(family).path, config: config)
                let m = try await model.encodeText(texts: texts)
                XCTAssertEqual(m.data.count, texts.count * 64)
                for (r, want) in embeddings.enumerated() where m.data.count == texts.count * 64 {
                    var dot = 0.0, norm = 0.0
                    for c in 0..<64 {
                        let g = Double(m.data[r * 64 + c])
                        dot += g * want[c]
                        norm += g * g
                    }
                    let cosine = dot / norm.squareRoot()
                    XCTAssertTrue(cosine >= 0.999, "bf16 \(family) text \(r): cosine \(cosine)")
                }
                try model.free()
            }
        }
        try executor.free()
    }

    func test34CrossEncodersRerankAsSentenceTransformers() async throws {
        guard let found = try families() else { return }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        for family in ["bert-reranker", "xlm-roberta-reranker", "modernbert-reranker"] {
            guard let query = found.reference[family]?["query"] as? String,
                  let documents = found.reference[family]?["documents"] as? [String],
                  let want = found.reference[family]?["scores"] as? [Double] else {
                return XCTFail("unreadable \(family)")
            }
            let model = try await load(found.root, family, executor)
            let d = try model.describe()
            XCTAssertTrue(d.crossEncoder)
            let got = try await model.rerank(query: query, documents: documents)
            XCTAssertEqual(got.map { $0.index }, (0..<documents.count).map { UInt32($0) })
            for (i, s) in got.enumerated() where got.count == want.count {
                XCTAssertLessThanOrEqual(abs(s.score - want[i]), 1e-4, "\(family) document \(i): \(s.score) vs \(want[i])")
            }
            let sorted = try await model.rerank(query: query, documents: documents, options: RerankOptions(sorted: true))
            XCTAssertEqual(sorted.map { $0.score }, got.map { $0.score }.sorted(by: >))
            for s in sorted where Int(s.index) < got.count {
                XCTAssertEqual(s.score, got[Int(s.index)].score, "\(family): the sorted scores keep their indices")
            }
            XCTAssertNotEqual(sorted.first?.index, 0)
            let bad: [(String, [String], RerankOptions)] = [
                ("", documents, RerankOptions()),
                (query, [], RerankOptions()),
                (query, documents, RerankOptions(maxTokens: 0)),
            ]
            for (q, docs, options) in bad {
                let error = await thrownAsync { _ = try await model.rerank(query: q, documents: docs, options: options) }
                guard case .InvalidArgument = error else {
                    return XCTFail("\(family): expected invalid argument, got \(text(error))")
                }
            }
            try model.free()
        }
        let plain = try await load(found.root, "distilbert", executor)
        let error = await thrownAsync { _ = try await plain.rerank(query: "q", documents: ["d"]) }
        guard case .Unsupported = error else { return XCTFail("expected unsupported, got \(text(error))") }
        try plain.free()
        try executor.free()
    }

    func test35PromptsAndDimensionsMatchSentenceTransformers() async throws {
        guard let found = try families() else { return }
        guard let distilbert = found.reference["distilbert"], let texts = distilbert["texts"] as? [String],
              let prompted = distilbert["prompted_query"] as? [[Double]],
              let truncated = distilbert["truncated_24"] as? [[Double]] else {
            return XCTFail("unreadable distilbert")
        }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let model = try await load(found.root, "distilbert", executor)
        let named = try await model.encodeText(texts: texts, options: EncodeTextOptions(promptName: "query"))
        XCTAssertLessThanOrEqual(maxDifference(named, prompted), 1e-4)
        let given = try await model.encodeText(texts: texts, options: EncodeTextOptions(prompt: "query: "))
        XCTAssertEqual(given, named)
        let cut = try await model.encodeText(texts: texts, options: EncodeTextOptions(dimensions: 24))
        XCTAssertEqual(cut.columns, 24)
        XCTAssertLessThanOrEqual(maxDifference(cut, truncated), 1e-4)
        let bad = [
            EncodeTextOptions(promptName: "nope"),
            EncodeTextOptions(promptName: "query", prompt: "a"),
            EncodeTextOptions(dimensions: 0),
            EncodeTextOptions(dimensions: 65),
        ]
        for options in bad {
            let error = await thrownAsync { _ = try await model.encodeText(texts: texts, options: options) }
            guard case .InvalidArgument = error else { return XCTFail("\(options): expected invalid argument, got \(text(error))") }
        }
        try model.free()
        try executor.free()
    }
}
