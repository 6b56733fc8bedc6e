// Scenarios 36–38 of SCENARIOS.md in Swift (issue 32): `Model.encodeImage` and the image-text models' `encodeText`
// on the random-weight CLIP, CLIP vision-only and SigLIP checkpoints of tests/fixtures/images, against transformers'
// embeddings of the committed files, of the processor's own crops (the same pixels) and its image × text logits
// (core/tests/images.rs is the model for these tests). `encodeImage` takes `[Data]` and is `async throws`, so every
// call here awaits: scenario 37's async form, where overlapping calls (`async let`) give the rows one call gives.

import Foundation
import XCTest
@testable import UForm

private func text(_ error: UFormError?) -> String {
    guard let error = error else { return "" }
    return String(describing: error)
}

/// Row `r` of a matrix as doubles; empty when the matrix holds fewer values than its shape says.
private func row(_ m: F32Matrix, _ r: Int) -> [Double] {
    let width = Int(m.columns)
    guard r >= 0, (r + 1) * width <= m.data.count else { return [] }
    return m.data[(r * width)..<((r + 1) * width)].map { Double($0) }
}

private func norm(_ v: [Double]) -> Double {
    v.reduce(0.0) { $0 + $1 * $1 }.squareRoot()
}

/// The worst cosine between `m`'s rows and `want`'s, row by row, with the row it was found at: minus infinity when
/// the shapes differ, and a NaN counts as the worst.
private func worstCosine(_ m: F32Matrix, _ want: [[Double]]) -> (cosine: Double, at: Int) {
    guard let width = want.first?.count, Int(m.rows) == want.count, Int(m.columns) == width,
          m.data.count == want.count * width else { return (cosine: -Double.infinity, at: -1) }
    var worst = Double.infinity
    var at = -1
    for (r, w) in want.enumerated() {
        let g = row(m, r)
        let dot = zip(g, w).reduce(0.0) { $0 + $1.0 * $1.1 }
        let cosine = dot / (norm(g) * norm(w))
        if cosine.isNaN || cosine < worst {
            worst = cosine
            at = r
        }
    }
    return (cosine: worst, at: at)
}

/// The images fixture, found in UFORM_TEST_IMAGES, else in TestModel/images beside the package (`cargo xtask package
/// swift --out DIR` copies it there), else beside UFORM_TEST_REFERENCE (`../images`), as FamiliesTests finds the
/// families; the text-only checkpoint is the families' distilbert, in UFORM_TEST_FAMILIES, else beside the images
/// (`../families`). Nil, the test failed, when the fixture is missing or unreadable.
private func imagesFixture() throws -> (root: URL, families: URL, reference: [String: [String: Any]])? {
    guard let root = fixtureRoot("UFORM_TEST_IMAGES", "images") else { return nil }
    let env = ProcessInfo.processInfo.environment
    let families = env["UFORM_TEST_FAMILIES"].map { URL(fileURLWithPath: $0) }
        ?? root.deletingLastPathComponent().appendingPathComponent("families")
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("reference.json")))
    guard let top = json as? [String: Any] else {
        XCTFail("unreadable \(root.path)/reference.json")
        return nil
    }
    var reference: [String: [String: Any]] = [:]
    for name in ["clip", "clip-vision", "siglip"] {
        guard let entry = top[name] as? [String: Any] else {
            XCTFail("\(root.path)/reference.json has no \(name)")
            return nil
        }
        reference[name] = entry
    }
    return (root: root, families: families, reference: reference)
}

final class ImagesTests: XCTestCase {
    private func load(_ root: URL, _ name: String, _ executor: Executor, _ precision: Precision? = nil) async throws -> Model {
        try await Model.loadRam(path: root.appendingPathComponent(name).path,
                                config: ModelLoadRamConfig(executor: executor, precision: precision))
    }

    /// Each named file of `folder` (under the images fixture), as `Data`.
    private func read(_ root: URL, _ folder: String, _ names: [String]) throws -> [Data] {
        try names.map { try Data(contentsOf: root.appendingPathComponent(folder).appendingPathComponent($0)) }
    }

    func test36EveryCheckpointEmbedsTheFilesAndTheCropsAsTransformersNormalisedByDefault() async throws {
        guard let found = try imagesFixture() else { return }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        for name in ["clip", "clip-vision", "siglip"] {
            let family = name.hasPrefix("clip") ? "clip" : "siglip"
            guard let entry = found.reference[name], let fileNames = entry["files"] as? [String],
                  let imageEmbeds = entry["image_embeds"] as? [[Double]], let cropNames = entry["crops"] as? [String],
                  let cropEmbeds = entry["crop_embeds"] as? [[Double]] else {
                return XCTFail("unreadable \(name)")
            }
            XCTAssertEqual(fileNames.count, 13)
            let model = try await load(found.root, name, executor)
            let files = try read(found.root, "files", fileNames)
            let fromFiles = try await model.encodeImage(images: files, options: EncodeImageOptions(normalize: false))
            let (cosine, at) = worstCosine(fromFiles, imageEmbeds)
            print("\(name): worst cosine from the files \(cosine) (files[\(at)])")
            XCTAssertGreaterThanOrEqual(cosine, 0.999, "\(name): files[\(at)]")
            // The processor's own crops are the same pixels: nothing left to the decoder but PNG.
            let crops = try read(found.root, "crops/\(family)", cropNames)
            let raw = try await model.encodeImage(images: crops, options: EncodeImageOptions(normalize: false))
            let (exact, exactAt) = worstCosine(raw, cropEmbeds)
            print("\(name): worst cosine from the same pixels \(exact) (crops[\(exactAt)])")
            XCTAssertGreaterThanOrEqual(exact, 0.9999, "\(name): crops[\(exactAt)]")
            // normalize: false keeps transformers' lengths (4 to 7 for these checkpoints, not 1) ...
            for (r, want) in cropEmbeds.enumerated() {
                let wantNorm = norm(want)
                XCTAssertGreaterThan(abs(wantNorm - 1), 0.5, "\(name): the reference's crops[\(r)] is already unit length")
                XCTAssertLessThanOrEqual(abs(norm(row(raw, r)) - wantNorm), 1e-3 * wantNorm, "\(name): crops[\(r)]")
            }
            // ... and absent (or nil) normalises: the same rows scaled to unit length, in input order.
            let normalised = try await model.encodeImage(images: crops)
            let absent = try await model.encodeImage(images: crops, options: EncodeImageOptions(normalize: nil))
            let explicit = try await model.encodeImage(images: crops, options: EncodeImageOptions(normalize: true))
            XCTAssertEqual(absent, normalised, name)
            XCTAssertEqual(explicit, normalised, name)
            XCTAssertEqual(normalised.rows, UInt32(crops.count))
            for r in 0..<crops.count {
                let got = row(normalised, r)
                let scaled = row(raw, r)
                XCTAssertEqual(norm(got), 1, accuracy: 1e-5, "\(name): crops[\(r)]")
                let n = norm(scaled)
                let worst = got.count == scaled.count ? (zip(got, scaled).map { abs($0 - $1 / n) }.max() ?? 0) : .infinity
                XCTAssertLessThan(worst, 1e-5, "\(name): crops[\(r)] normalised is not raw / norm")
            }
            let d = try model.describe()
            XCTAssertEqual(d.towers, name == "clip-vision" ? ["image"] : ["text", "image"], name)
            XCTAssertEqual(d.family, family, name)
            XCTAssertEqual(d.dimensions, normalised.columns, name)
            try model.free()
        }
        try executor.free()
    }

    func test36TextsAndImageTextLogitsMatchTransformers() async throws {
        guard let found = try imagesFixture() else { return }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        for name in ["clip", "siglip"] {
            guard let entry = found.reference[name], let fileNames = entry["files"] as? [String],
                  let texts = entry["texts"] as? [String], let textEmbeds = entry["text_embeds"] as? [[Double]],
                  let logitScale = entry["logit_scale"] as? Double,
                  let logits = entry["logits_per_image"] as? [[Double]] else {
                return XCTFail("unreadable \(name)")
            }
            let bias = (entry["logit_bias"] as? Double) ?? 0
            let model = try await load(found.root, name, executor)
            let files = try read(found.root, "files", fileNames)
            let images = try await model.encodeImage(images: files)
            let embedded = try await model.encodeText(texts: texts)
            let (cosine, at) = worstCosine(embedded, textEmbeds)
            XCTAssertGreaterThanOrEqual(cosine, 0.9999, "\(name): texts[\(at)]")
            XCTAssertEqual(images.columns, embedded.columns, name)
            XCTAssertEqual(logits.count, Int(images.rows), name)
            let scale = exp(logitScale)
            var worst = 0.0
            for (i, wantRow) in logits.enumerated() {
                let imageRow = row(images, i)
                XCTAssertEqual(wantRow.count, Int(embedded.rows), name)
                for (t, want) in wantRow.enumerated() {
                    let textRow = row(embedded, t)
                    guard !imageRow.isEmpty, imageRow.count == textRow.count else {
                        worst = .infinity
                        continue
                    }
                    let dot = zip(imageRow, textRow).reduce(0.0) { $0 + $1.0 * $1.1 }
                    let difference = abs(scale * dot + bias - want)
                    worst = max(worst, difference.isNaN ? .infinity : difference)
                }
            }
            print("\(name): logits_per_image within \(worst) (scale \(scale))")
            XCTAssertLessThan(worst, 0.02 * scale, "\(name): logits differ")
            // The text tower takes no prompt and no token limit; Matryoshka dimensions it does.
            let prompted = await thrownAsync {
                _ = try await model.encodeText(texts: ["a dog"], options: EncodeTextOptions(prompt: "query: "))
            }
            guard case .Unsupported = prompted else { return XCTFail("\(name) prompt: \(text(prompted))") }
            let limited = await thrownAsync {
                _ = try await model.encodeText(texts: ["a dog"], options: EncodeTextOptions(maxTokens: 4))
            }
            guard case .Unsupported = limited else { return XCTFail("\(name) maxTokens: \(text(limited))") }
            let cut = try await model.encodeText(texts: ["a dog"], options: EncodeTextOptions(dimensions: 8))
            XCTAssertEqual(cut.columns, 8, name)
            try model.free()
        }
        try executor.free()
    }

    func test36Bf16EmbedsTheFilesNearTheReferenceWhereTheCpuHasIt() async throws {
        guard let found = try imagesFixture() else { return }
        let classes = capabilitiesAvailable().split(separator: ",").map(String.init)
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        if !(classes.contains("amd-genoa") || classes.contains("intel-sapphirerapids")) {
            // This CPU has no bf16 instructions: its native class refuses bf16 (as ModelTests' bf16 test checks).
            let refused = await thrownAsync { _ = try await self.load(found.root, "clip", executor, .bf16) }
            guard case .Unsupported = refused else { return XCTFail("native class: \(text(refused))") }
            try executor.free()
            return
        }
        for name in ["clip", "clip-vision", "siglip"] {
            guard let fileNames = found.reference[name]?["files"] as? [String],
                  let imageEmbeds = found.reference[name]?["image_embeds"] as? [[Double]] else {
                return XCTFail("unreadable \(name)")
            }
            let files = try read(found.root, "files", fileNames)
            let f32 = try await load(found.root, name, executor)
            let exact = try await f32.encodeImage(images: files)
            try f32.free()
            let model = try await load(found.root, name, executor, .bf16)
            let d = try model.describe()
            XCTAssertEqual(d.precision, .bf16, name)
            let got = try await model.encodeImage(images: files, options: EncodeImageOptions(normalize: false))
            let (cosine, at) = worstCosine(got, imageEmbeds)
            print("\(name) bf16: worst cosine from the files \(cosine) (files[\(at)])")
            XCTAssertGreaterThanOrEqual(cosine, 0.999, "\(name) bf16: files[\(at)]")
            let normalised = try await model.encodeImage(images: files)
            XCTAssertNotEqual(normalised, exact, "\(name): bf16 gave f32's embeddings")
            try model.free()
        }
        try executor.free()
    }

    func test37DataOfAnyOriginIsAnImageAndOverlappingAwaitsGiveOneCallsRows() async throws {
        guard let found = try imagesFixture() else { return }
        guard let fileNames = found.reference["clip"]?["files"] as? [String] else { return XCTFail("unreadable clip") }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let model = try await load(found.root, "clip", executor)
        let files = try read(found.root, "files", fileNames)
        let want = try await model.encodeImage(images: files)
        XCTAssertEqual(want.rows, UInt32(files.count))
        // A slice of a larger Data (its indices start at 7, not 0) and the bytes copied into a new Data.
        var padded = Data(repeating: 0x55, count: 7)
        padded.append(files[3])
        padded.append(Data(count: 5))
        let slice = padded[7..<(7 + files[3].count)]
        XCTAssertEqual(slice.startIndex, 7)
        let copied = Data([UInt8](files[3]))
        let both = try await model.encodeImage(images: [slice, copied])
        XCTAssertEqual(both.rows, 2)
        XCTAssertEqual(row(both, 0), row(want, 3), "the slice")
        XCTAssertEqual(row(both, 1), row(want, 3), "the copy")
        // Overlapping awaits on the one model: each gives the rows of the single call, in its own input order.
        let reversedFiles = Array(files.reversed())
        async let first = model.encodeImage(images: files)
        async let second = model.encodeImage(images: reversedFiles)
        async let third = model.encodeImage(images: files)
        let a = try await first
        let b = try await second
        let c = try await third
        XCTAssertEqual(a, want)
        XCTAssertEqual(c, want)
        XCTAssertEqual(b.rows, want.rows)
        for r in 0..<files.count {
            XCTAssertEqual(row(b, files.count - 1 - r), row(want, r), "files[\(r)] in reverse order")
        }
        try model.free()
        try executor.free()
    }

    func test38HostileImagesAreInvalidArgumentsNamingTheirIndexAndTheModelStillEmbeds() async throws {
        guard let found = try imagesFixture() else { return }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let model = try await load(found.root, "clip", executor)
        let good = try Data(contentsOf: found.root.appendingPathComponent("files").appendingPathComponent("photo.jpg"))
        let folder = found.root.appendingPathComponent("hostile")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertEqual(names, ["animated.gif", "animated.png", "animated.webp", "bomb.png", "not-an-image.bin", "truncated.jpg"])
        var cases: [(String, Data)] = []
        for name in names {
            let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
            cases.append((name, bytes))
        }
        cases.append(("<empty>", Data()))
        for (name, bytes) in cases {
            let error = await thrownAsync { _ = try await model.encodeImage(images: [good, good, bytes]) }
            guard case .InvalidArgument(let message) = error else { XCTFail("\(name): \(text(error))"); continue }
            XCTAssertTrue(message.contains("images[2]"), "\(name): \(message)")
            if name.contains("bomb") {
                XCTAssertTrue(message.contains("budget"), "\(name): \(message)")
            }
        }
        // Nothing was lost: the model still embeds, and an empty list is no rows.
        let after = try await model.encodeImage(images: [good])
        XCTAssertEqual(after.rows, 1)
        XCTAssertEqual(norm(row(after, 0)), 1, accuracy: 1e-5)
        let none = try await model.encodeImage(images: [])
        XCTAssertEqual(none.rows, 0)
        XCTAssertEqual(none.data.count, 0)
        try model.free()
        try executor.free()
    }

    func test38TextOnlyAndVisionOnlyModelsRefuseTheOtherVerbAndImageTextModelsRerank() async throws {
        guard let found = try imagesFixture() else { return }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let photo = try Data(contentsOf: found.root.appendingPathComponent("files").appendingPathComponent("photo.jpg"))
        let textOnly = try await Model.loadRam(path: found.families.appendingPathComponent("distilbert").path,
                                               config: ModelLoadRamConfig(executor: executor))
        let d = try textOnly.describe()
        XCTAssertEqual(d.towers, ["text"])
        let noImage = await thrownAsync { _ = try await textOnly.encodeImage(images: [photo]) }
        guard case .Unsupported = noImage else { return XCTFail("text-only encodeImage: \(text(noImage))") }
        try textOnly.free()
        let vision = try await load(found.root, "clip-vision", executor)
        let noText = await thrownAsync { _ = try await vision.encodeText(texts: ["a dog"]) }
        guard case .Unsupported = noText else { return XCTFail("vision-only encodeText: \(text(noText))") }
        try vision.free()
        let clip = try await load(found.root, "clip", executor)
        let noRerank = await thrownAsync { _ = try await clip.rerank(query: "a dog", documents: ["a cat"]) }
        guard case .Unsupported = noRerank else { return XCTFail("clip rerank: \(text(noRerank))") }
        try clip.free()
        try executor.free()
    }
}
