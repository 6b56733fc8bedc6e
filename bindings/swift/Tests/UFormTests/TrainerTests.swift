// Trainer scenarios 26–29 of SCENARIOS.md in Swift, numbered after the scenario each covers. `step` is
// `async throws` in Swift (the IDL's `async: true`), so every step here awaits. The tests need the test model and the
// training fixture: UFORM_TEST_MODEL_DIR and UFORM_TEST_TRAIN_REFERENCE (set by the runner where `swift test` runs),
// or the TestModel folder `cargo xtask package swift --out DIR` puts beside the package.

import Foundation
import XCTest
@testable import UForm

private func text(_ error: UFormError?) -> String {
    guard let error = error else { return "no error" }
    return String(describing: error)
}

private func temporary(_ name: String) throws -> URL {
    try temporaryFolder("train", name)
}

private func cosine(_ m: F32Matrix, _ row: Int, _ want: [Double]) -> Double {
    let columns = Int(m.columns)
    var dot = 0.0, gg = 0.0, ww = 0.0
    for c in 0..<columns {
        let g = Double(m.data[row * columns + c])
        dot += g * want[c]
        gg += g * g
        ww += want[c] * want[c]
    }
    return dot / (gg * ww).squareRoot()
}

private func maxDiff(_ a: F32Matrix, _ b: F32Matrix) -> Double {
    guard a.data.count == b.data.count else { return .infinity }
    var worst = 0.0
    for i in 0..<a.data.count { worst = max(worst, abs(Double(a.data[i]) - Double(b.data[i]))) }
    return worst
}

/// The training fixture: its config, pairs, the steps' batches and numbers, and the held-out embeddings.
private struct TrainReference {
    let config: TrainerContrastiveConfig
    let pairs: [[String]]
    let steps: [[Int]]
    let loss: [Double]
    let lr: [Double]
    let gradNorm: [Double]
    let heldOut: [String]
    let before: [[Double]]
    let after: [[Double]]

    init?(path: String) {
        guard let data = FileManager.default.contents(atPath: path),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let c = json["config"] as? [String: Any],
              let learningRate = c["learning_rate"] as? Double, let weightDecay = c["weight_decay"] as? Double,
              let warmup = c["warmup_steps"] as? Int, let total = (c["total_steps"] ?? c["max_steps"]) as? Int,
              let maxGradNorm = c["max_grad_norm"] as? Double, let scale = c["scale"] as? Double,
              let dropout = c["dropout"] as? Double, let seed = c["seed"] as? Int,
              let pairs = json["pairs"] as? [[String]], let steps = json["steps"] as? [[Int]],
              let loss = json["loss"] as? [Double], let lr = json["lr"] as? [Double],
              let gradNorm = json["grad_norm"] as? [Double], let heldOut = json["held_out"] as? [String],
              let before = json["held_out_embeddings_before"] as? [[Double]],
              let after = json["held_out_embeddings_after"] as? [[Double]] else { return nil }
        config = TrainerContrastiveConfig(
            learningRate: learningRate, weightDecay: weightDecay, warmupSteps: UInt32(warmup),
            totalSteps: UInt32(total), maxGradNorm: maxGradNorm, scale: scale, dropout: dropout, seed: UInt64(seed))
        (self.pairs, self.steps, self.loss, self.lr, self.gradNorm) = (pairs, steps, loss, lr, gradNorm)
        (self.heldOut, self.before, self.after) = (heldOut, before, after)
    }

    /// Step k's anchors and positives, as `steps[k]` lists the pairs.
    func batch(_ k: Int) -> ([String], [String]) {
        (steps[k].map { pairs[$0][0] }, steps[k].map { pairs[$0][1] })
    }
}

final class TrainerTests: XCTestCase {
    private var modelDir = ""
    private var reference: TrainReference!

    override func setUpWithError() throws {
        // The runner's variables, or the TestModel folder `cargo xtask package swift --out DIR` puts beside the package.
        let env = ProcessInfo.processInfo.environment
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let beside = package.appendingPathComponent("TestModel")
        modelDir = env["UFORM_TEST_MODEL_DIR"] ?? beside.appendingPathComponent("model").path
        let path = env["UFORM_TEST_TRAIN_REFERENCE"] ?? beside.appendingPathComponent("train-reference.json").path
        guard FileManager.default.fileExists(atPath: modelDir + "/model.safetensors"), let loaded = TrainReference(path: path) else {
            throw XCTSkip("no test model at \(modelDir) or no readable fixture at \(path): set UFORM_TEST_MODEL_DIR and UFORM_TEST_TRAIN_REFERENCE, or use the folder `cargo xtask package swift --out DIR` makes")
        }
        reference = loaded
    }

    private func load(_ executor: Executor, _ path: String? = nil) async throws -> Model {
        try await Model.loadRam(path: path ?? modelDir, config: ModelLoadRamConfig(executor: executor))
    }

    private func checkStep(_ s: TrainStep, _ k: Int) {
        XCTAssertEqual(s.step, UInt64(k + 1))
        XCTAssertLessThanOrEqual(abs(s.loss - reference.loss[k]), 1e-4 * abs(reference.loss[k]), "step \(k + 1): loss \(s.loss)")
        XCTAssertLessThanOrEqual(abs(s.learningRate - reference.lr[k]), 1e-9 * abs(reference.lr[k]), "step \(k + 1): learning rate \(s.learningRate)")
        XCTAssertLessThanOrEqual(abs(s.gradientNorm - reference.gradNorm[k]), 1e-3 * reference.gradNorm[k], "step \(k + 1): gradient norm \(s.gradientNorm)")
        XCTAssertTrue(s.seconds.isFinite && s.seconds >= 0)
    }

    func test26TheCommittedFixtureLossesLearningRatesAndHeldOutEmbeddings() async throws {
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let model = try await load(executor)
        let untrained = try await model.encodeText(texts: reference.heldOut)
        for i in 0..<reference.heldOut.count {
            XCTAssertGreaterThanOrEqual(cosine(untrained, i, reference.before[i]), 0.9999, "the untrained model is not the fixture's")
        }
        XCTAssertEqual(reference.steps.count, 20)
        let trainer = try Trainer.contrastive(model: model, config: reference.config)
        for k in 0..<reference.steps.count {
            let (anchors, positives) = reference.batch(k)
            checkStep(try await trainer.step(anchors: anchors, positives: positives), k)
        }
        try trainer.free()
        let trained = try await model.encodeText(texts: reference.heldOut)
        for i in 0..<reference.heldOut.count {
            XCTAssertGreaterThanOrEqual(cosine(trained, i, reference.after[i]), 0.9999, "held-out \(i) against the fixture's trained embedding")
            XCTAssertLessThan(cosine(trained, i, reference.before[i]), 0.9995, "held-out \(i) did not move from the untrained embedding")
        }
        try model.free()
        try executor.free()
    }

    func test27EncodeAfterAStepSaveAndLoadBack() async throws {
        let dir = try temporary("save")
        defer { try? FileManager.default.removeItem(at: dir) }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 2))
        let model = try await load(executor)
        let texts = Array(reference.heldOut[0..<4])
        let untrained = try await model.encodeText(texts: texts)
        // No warm-up, so the first step's learning rate is not zero and the weights move.
        let trainer = try Trainer.contrastive(model: model, config: TrainerContrastiveConfig(learningRate: 1e-4, dropout: 0, seed: 7))
        let (anchors, positives) = reference.batch(0)
        let first = try await trainer.step(anchors: anchors, positives: positives)
        XCTAssertEqual(first.step, 1)
        XCTAssertEqual(first.learningRate, 1e-4, accuracy: 1e-13)
        let stepped = try await model.encodeText(texts: texts)
        XCTAssertGreaterThan(maxDiff(stepped, untrained), 1e-4, "encodeText after a step still embeds with the old weights")
        let saved = dir.appendingPathComponent("trained").path
        try trainer.save(directory: saved)
        XCTAssertTrue(FileManager.default.fileExists(atPath: saved + "/model.safetensors"))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["trained"])
        try trainer.free()
        let afterFree = try await model.encodeText(texts: texts)
        XCTAssertLessThanOrEqual(maxDiff(afterFree, stepped), 1e-6)
        let loaded = try await load(executor, saved)
        XCTAssertEqual(try loaded.describe().architecture, "bert")
        let reloaded = try await loaded.encodeText(texts: texts)
        XCTAssertLessThanOrEqual(maxDiff(reloaded, stepped), 1e-6, "the saved folder embeds differently")
        try loaded.free()
        try model.free()
        try executor.free()
    }

    func test28BadConfigsBatchesAndSavesAreTheDocumentedErrors() async throws {
        let dir = try temporary("bad")
        defer { try? FileManager.default.removeItem(at: dir) }
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        let model = try await load(executor)
        let configs: [(String, TrainerContrastiveConfig)] = [
            ("config.learningRate", TrainerContrastiveConfig(learningRate: .nan)),
            ("config.learningRate", TrainerContrastiveConfig(learningRate: .infinity)),
            ("config.learningRate", TrainerContrastiveConfig(learningRate: -1e-4)),
            ("config.weightDecay", TrainerContrastiveConfig(weightDecay: .nan)),
            ("config.weightDecay", TrainerContrastiveConfig(weightDecay: -0.01)),
            ("config.maxGradNorm", TrainerContrastiveConfig(maxGradNorm: -.infinity)),
            ("config.scale", TrainerContrastiveConfig(scale: 0)),
            ("config.scale", TrainerContrastiveConfig(scale: .nan)),
            ("config.dropout", TrainerContrastiveConfig(dropout: 1)),
            ("config.dropout", TrainerContrastiveConfig(dropout: -0.1)),
            ("config.maxTokens", TrainerContrastiveConfig(maxTokens: 0)),
            ("config.maxTokens", TrainerContrastiveConfig(maxTokens: 513)),
        ]
        for (field, config) in configs {
            let error = thrown { _ = try Trainer.contrastive(model: model, config: config) }
            guard case .InvalidArgument(let message) = error else { XCTFail("\(field): \(text(error))"); continue }
            XCTAssertTrue(message.contains("`\(field)`"), message)
        }
        try Trainer.contrastive(model: model, config: TrainerContrastiveConfig(learningRate: 0, maxGradNorm: 0, dropout: 0)).free()
        try Trainer.contrastive(model: model).free()

        let trainer = try Trainer.contrastive(model: model, config: TrainerContrastiveConfig(learningRate: 1e-4, dropout: 0))
        let texts = Array(reference.heldOut[0..<2])
        let untrained = try await model.encodeText(texts: texts)
        let batches: [([String], [String], String)] = [
            (["a", "b"], ["p"], "`positives`"),
            ([], [], "`anchors`"),
            (["fine", "nul\u{0}inside"], ["p", "q"], "`anchors[1]`"),
            (["a", "b"], ["\u{0}", "q"], "`positives[0]`"),
        ]
        for (anchors, positives, word) in batches {
            let error = await thrownAsync { _ = try await trainer.step(anchors: anchors, positives: positives) }
            guard case .InvalidArgument(let message) = error else { XCTFail("\(word): \(text(error))"); continue }
            XCTAssertTrue(message.contains(word), message)
        }
        let afterFailedSteps = try await model.encodeText(texts: texts)
        XCTAssertEqual(maxDiff(afterFailedSteps, untrained), 0, "a failed step changed the weights")

        let existing = dir.appendingPathComponent("existing")
        try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: true)
        let aFile = dir.appendingPathComponent("a-file")
        try Data("not a directory".utf8).write(to: aFile)
        for path in [existing.path, aFile.path] {
            guard case .InvalidArgument(let message) = thrown({ try trainer.save(directory: path) }) else { XCTFail(path); continue }
            XCTAssertTrue(message.contains("`directory`") && message.contains("already exists"), message)
        }
        for path in [dir.appendingPathComponent("missing/trained").path, aFile.path + "/trained"] {
            guard case .Io(let message) = thrown({ try trainer.save(directory: path) }) else { XCTFail(path); continue }
            XCTAssertTrue(message.contains(path), message)
        }
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)), ["existing", "a-file"], "a failed save left something behind")
        try trainer.free()
        try trainer.free() // a second free does nothing
        guard case .FreedHandle = await thrownAsync({ _ = try await trainer.step(anchors: ["a"], positives: ["p"]) }) else {
            return XCTFail("expected freed")
        }
        guard case .FreedHandle = thrown({ try trainer.save(directory: dir.appendingPathComponent("never").path) }) else {
            return XCTFail("expected freed")
        }
        let stillUsable = try await model.encodeText(texts: ["still usable"])
        XCTAssertEqual(stillUsable.rows, 1)
        try model.free()
        guard case .FreedHandle = thrown({ _ = try Trainer.contrastive(model: model) }) else { return XCTFail("expected freed") }
        try executor.free()
    }

    func test29ALiveTrainerKeepsItsModelInUseAndDeinitReleasesIt() async throws {
        let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
        let model = try await load(executor)
        let first = try Trainer.contrastive(model: model)
        guard case .InUse(let one) = thrown({ try model.free() }) else { return XCTFail("expected in use") }
        XCTAssertTrue(one.contains("1 trainer borrows it; free it first"), one)
        do {
            let second = try Trainer.contrastive(model: model)
            guard case .InUse(let two) = thrown({ try model.free() }) else { return XCTFail("expected in use") }
            XCTAssertTrue(two.contains("2 trainers borrow it"), two)
            _ = second
        }
        // `second` went out of scope: deinit freed it, so only `first` borrows the model.
        guard case .InUse(let again) = thrown({ try model.free() }) else { return XCTFail("expected in use") }
        XCTAssertTrue(again.contains("1 trainer borrows it"), again)
        try first.free()
        try first.free()
        try model.free()
        try executor.free()
    }
}
