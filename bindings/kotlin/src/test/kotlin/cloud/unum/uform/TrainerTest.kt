// Trainer scenarios 26–29 of SCENARIOS.md in Kotlin, numbered after the scenario each covers. They need
// UFORM_TEST_MODEL_DIR and UFORM_TEST_TRAIN_REFERENCE (tests/fixtures/train/reference.json), which
// `cargo xtask test kotlin` sets.

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import kotlin.math.abs
import kotlin.math.sqrt

/** The training fixture: its config, pairs, the 20 steps' batches and numbers, and the held-out embeddings. */
private class TrainReference(path: String) {
    private val json = readJsonObject(path)
    @Suppress("UNCHECKED_CAST")
    private fun <T> get(key: String) = json[key] as T
    private fun numbers(key: String) = get<List<Double>>(key).toDoubleArray()
    private fun matrix(key: String) = get<List<List<Double>>>(key).map { it.toDoubleArray() }

    private val config = get<Map<String, Any?>>("config")
    private fun setting(key: String) = config[key] as Double

    val trainerConfig = TrainerContrastiveConfig(
        learningRate = setting("learning_rate"),
        weightDecay = setting("weight_decay"),
        warmupSteps = setting("warmup_steps").toUInt(),
        totalSteps = ((config["total_steps"] ?: config["max_steps"]) as Double).toUInt(),
        maxGradNorm = setting("max_grad_norm"),
        scale = setting("scale"),
        dropout = setting("dropout"),
        seed = setting("seed").toULong(),
    )
    val pairs: List<List<String>> = get("pairs")
    val steps: List<List<Int>> = get<List<List<Double>>>("steps").map { s -> s.map { it.toInt() } }
    val loss = numbers("loss")
    val lr = numbers("lr")
    val gradNorm = numbers("grad_norm")
    val heldOut: List<String> = get("held_out")
    val before = matrix("held_out_embeddings_before")
    val after = matrix("held_out_embeddings_after")

    /** Step k's anchors and positives, as `steps[k]` lists the pairs. */
    fun batch(k: Int): Pair<List<String>, List<String>> = steps[k].map { pairs[it][0] } to steps[k].map { pairs[it][1] }
}

private fun cosine(m: F32Matrix, row: Int, want: DoubleArray): Double {
    var dot = 0.0; var gg = 0.0; var ww = 0.0
    for (c in 0 until m.columns.toInt()) {
        val g = m.data[row * m.columns.toInt() + c].toDouble()
        dot += g * want[c]; gg += g * g; ww += want[c] * want[c]
    }
    return dot / sqrt(gg * ww)
}

private fun maxDiff(a: F32Matrix, b: F32Matrix): Double {
    assertEquals(a.data.size, b.data.size)
    return a.data.indices.maxOfOrNull { abs(a.data[it].toDouble() - b.data[it].toDouble()) } ?: 0.0
}

class TrainerTest {
    private val modelDir by lazy { required("UFORM_TEST_MODEL_DIR") }
    private val reference by lazy { TrainReference(required("UFORM_TEST_TRAIN_REFERENCE")) }

    /** A one-executor, one-model world, freed after [body] (the model first, after the trainers [body] freed). */
    private fun withModel(body: (Executor, Model) -> Unit) {
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { executor ->
            val model = Model.loadRam(modelDir, ModelLoadRamConfig(executor))
            try {
                body(executor, model)
            } finally {
                model.free()
            }
        }
    }

    private fun checkStep(s: TrainStep, k: Int) {
        assertEquals((k + 1).toULong(), s.step)
        assertTrue(abs(s.loss - reference.loss[k]) <= 1e-4 * abs(reference.loss[k]), "step ${k + 1}: loss ${s.loss}, fixture ${reference.loss[k]}")
        assertTrue(abs(s.learningRate - reference.lr[k]) <= 1e-9 * abs(reference.lr[k]), "step ${k + 1}: learning rate ${s.learningRate}, fixture ${reference.lr[k]}")
        assertTrue(abs(s.gradientNorm - reference.gradNorm[k]) <= 1e-3 * reference.gradNorm[k], "step ${k + 1}: gradient norm ${s.gradientNorm}, fixture ${reference.gradNorm[k]}")
        assertTrue(s.seconds.isFinite() && s.seconds >= 0.0)
    }

    @Test
    fun `26 the committed fixture - losses, learning rates and held-out embeddings`() = withModel { _, model ->
        val untrained = model.encodeText(reference.heldOut)
        for (i in reference.heldOut.indices) assertTrue(cosine(untrained, i, reference.before[i]) >= 0.9999, "the untrained model is not the fixture's")
        assertEquals(20, reference.steps.size)
        Trainer.contrastive(model, reference.trainerConfig).use { trainer ->
            for (k in reference.steps.indices) {
                val (anchors, positives) = reference.batch(k)
                checkStep(trainer.step(anchors, positives), k)
            }
        }
        val trained = model.encodeText(reference.heldOut)
        for (i in reference.heldOut.indices) {
            val toAfter = cosine(trained, i, reference.after[i])
            val toBefore = cosine(trained, i, reference.before[i])
            assertTrue(toAfter >= 0.9999, "held-out $i: cosine $toAfter to the fixture's trained embedding")
            assertTrue(toBefore < 0.9995, "held-out $i: cosine $toBefore to the untrained embedding (did not move)")
        }
    }

    @Test
    fun `27 encodeText after a step embeds with the new weights, save loads back the same`(@TempDir dir: Path) = withModel { executor, model ->
        val texts = reference.heldOut.take(4)
        val untrained = model.encodeText(texts)
        val saved = dir.resolve("trained").toString()
        lateinit var trained: F32Matrix
        // No warm-up, so the first step's learning rate is not zero and the weights move.
        Trainer.contrastive(model, TrainerContrastiveConfig(learningRate = 1e-4, dropout = 0.0, seed = 7uL)).use { trainer ->
            val (anchors, positives) = reference.batch(0)
            val s = trainer.step(anchors, positives)
            assertEquals(1uL, s.step)
            assertTrue(abs(s.learningRate - 1e-4) <= 1e-13, "${s.learningRate}")
            val stepped = model.encodeText(texts)
            assertTrue(maxDiff(stepped, untrained) > 1e-4, "encodeText after a step still embeds with the old weights")
            val (a2, p2) = reference.batch(1)
            assertEquals(2uL, trainer.step(a2, p2).step)
            trained = model.encodeText(texts)
            trainer.save(saved)
        }
        assertTrue(File(saved, "model.safetensors").isFile)
        assertEquals(listOf("trained"), dir.toFile().list()!!.toList(), "a temporary sibling was left behind")
        assertTrue(maxDiff(model.encodeText(texts), trained) <= 1e-6, "closing the trainer kept the trained weights")
        Model.loadRam(saved, ModelLoadRamConfig(executor)).use { loaded ->
            assertEquals("bert", loaded.describe().architecture)
            assertTrue(maxDiff(loaded.encodeText(texts), trained) <= 1e-6, "the saved folder embeds differently")
        }
    }

    @Test
    fun `28 a bad config is an invalid argument naming the field, the model stays usable`() = withModel { _, model ->
        val cases = listOf(
            "learningRate" to TrainerContrastiveConfig(learningRate = Double.NaN),
            "learningRate" to TrainerContrastiveConfig(learningRate = Double.POSITIVE_INFINITY),
            "learningRate" to TrainerContrastiveConfig(learningRate = -1e-4),
            "learningRate" to TrainerContrastiveConfig(learningRate = -Double.MIN_VALUE),
            "weightDecay" to TrainerContrastiveConfig(weightDecay = Double.NaN),
            "weightDecay" to TrainerContrastiveConfig(weightDecay = Double.NEGATIVE_INFINITY),
            "weightDecay" to TrainerContrastiveConfig(weightDecay = -0.01),
            "maxGradNorm" to TrainerContrastiveConfig(maxGradNorm = Double.NaN),
            "maxGradNorm" to TrainerContrastiveConfig(maxGradNorm = Double.POSITIVE_INFINITY),
            "maxGradNorm" to TrainerContrastiveConfig(maxGradNorm = -1.0),
            "scale" to TrainerContrastiveConfig(scale = Double.NaN),
            "scale" to TrainerContrastiveConfig(scale = Double.POSITIVE_INFINITY),
            "scale" to TrainerContrastiveConfig(scale = 0.0),
            "scale" to TrainerContrastiveConfig(scale = -20.0),
            "dropout" to TrainerContrastiveConfig(dropout = Double.NaN),
            "dropout" to TrainerContrastiveConfig(dropout = -0.1),
            "dropout" to TrainerContrastiveConfig(dropout = 1.0),
            "dropout" to TrainerContrastiveConfig(dropout = 1.5),
            "maxTokens" to TrainerContrastiveConfig(maxTokens = 0u),
            "maxTokens" to TrainerContrastiveConfig(maxTokens = 513u),
            "maxTokens" to TrainerContrastiveConfig(maxTokens = UInt.MAX_VALUE),
        )
        for ((field, config) in cases) {
            val e = assertThrows<UFormException.InvalidArgument>("$field in $config") { Trainer.contrastive(model, config) }
            assertTrue(e.message!!.contains("`config.$field`"), e.message)
        }
        // The edges of each range, zero where it means off, every field absent, and no config.
        for (config in listOf(
            TrainerContrastiveConfig(learningRate = 0.0, weightDecay = 0.0, maxGradNorm = 0.0, dropout = 0.0),
            TrainerContrastiveConfig(dropout = 0.999, maxTokens = 512u, scale = 1e-3, seed = ULong.MAX_VALUE, warmupSteps = UInt.MAX_VALUE),
            TrainerContrastiveConfig(null, null, null, null, null, null, null, null, null),
            null,
        )) {
            Trainer.contrastive(model, config).free()
        }
        assertEquals(1u, model.encodeText(listOf("still usable")).rows)
    }

    @Test
    fun `28 bad batches change no weight and do not count as a step`() = withModel { _, model ->
        val texts = reference.heldOut.take(3)
        val untrained = model.encodeText(texts)
        val (anchors, positives) = reference.batch(0)
        Trainer.contrastive(model, TrainerContrastiveConfig(learningRate = 1e-4, dropout = 0.0)).use { trainer ->
            val cases = listOf(
                Triple(anchors, positives.drop(1), "`positives`"),
                Triple(anchors.take(1), emptyList(), "`positives`"),
                Triple(emptyList<String>(), emptyList(), "`anchors`"),
                Triple(listOf("fine", "nul\u0000inside"), listOf("a", "b"), "`anchors[1]`"),
                Triple(listOf("fine", "also fine"), listOf("\u0000", "b"), "`positives[0]`"),
            )
            for ((a, p, word) in cases) {
                val e = assertThrows<UFormException.InvalidArgument>(word) { trainer.step(a, p) }
                assertTrue(e.message!!.contains(word), e.message)
            }
            // A lone surrogate cannot become UTF-8: the JNI glue refuses it before the core sees it.
            assertThrows<java.nio.charset.CharacterCodingException> { trainer.step(listOf("\uD800"), listOf("b")) }
            assertEquals(0.0, maxDiff(model.encodeText(texts), untrained), "a failed step changed the weights")
            assertEquals(1uL, trainer.step(anchors, positives).step, "a failed step counted as a step")
        }
    }

    @Test
    fun `28 save refuses an existing or unwritable path and leaves nothing behind`(@TempDir dir: Path) = withModel { _, model ->
        val existing = dir.resolve("existing").toFile().apply { mkdir() }
        File(existing, "keep.txt").writeText("kept")
        val aFile = dir.resolve("a-file").toFile().apply { writeText("not a directory") }
        Trainer.contrastive(model).use { trainer ->
            for (path in listOf(existing.path, aFile.path)) {
                val e = assertThrows<UFormException.InvalidArgument>(path) { trainer.save(path) }
                assertTrue(e.message!!.contains("`directory`") && e.message!!.contains("already exists"), e.message)
            }
            for (path in listOf(dir.resolve("missing/trained").toString(), "${aFile.path}/trained")) {
                val e = assertThrows<UFormException.Io>(path) { trainer.save(path) }
                assertTrue(e.message!!.contains(path), e.message)
            }
            assertThrows<java.nio.charset.CharacterCodingException> { trainer.save("$dir/lone \uD800") }
        }
        assertEquals(setOf("a-file", "existing"), dir.toFile().list()!!.toSet(), "a failed save left something behind")
        assertEquals(listOf("keep.txt"), existing.list()!!.toList())
        assertEquals("not a directory", aFile.readText())
        assertEquals(1u, model.encodeText(listOf("still usable")).rows)
    }

    @Test
    fun `28 a freed or closed trainer refuses every call`(@TempDir dir: Path) = withModel { executor, model ->
        val trainer = Trainer.contrastive(model)
        trainer.free()
        trainer.free()
        assertThrows<UFormException.FreedHandle> { trainer.step(listOf("a"), listOf("p")) }.also { assertTrue(it.message!!.contains("step"), it.message) }
        assertThrows<UFormException.FreedHandle> { trainer.save(dir.resolve("never").toString()) }
        trainer.close()
        trainer.close()
        assertThrows<IllegalStateException> { trainer.step(listOf("a"), listOf("p")) }
        assertTrue(dir.toFile().list()!!.isEmpty())
        val gone = Model.loadRam(modelDir, ModelLoadRamConfig(executor))
        gone.free()
        val e = assertThrows<UFormException.FreedHandle> { Trainer.contrastive(gone) }
        assertTrue(e.message!!.contains("Trainer.contrastive"), e.message)
        val closed = Model.loadRam(modelDir, ModelLoadRamConfig(executor)).also { it.close() }
        assertThrows<IllegalStateException> { Trainer.contrastive(closed) }
    }

    @Test
    fun `28 a VRAM model is unsupported`() {
        assumeTrue(gpuDevices().isNotEmpty(), "no GPU: a VRAM model cannot be made here")
        Executor.forVram(ExecutorForVramConfig(devices = listOf(0u))).use { gpu ->
            Model.loadVram(modelDir, ModelLoadVramConfig(gpu, listOf(0u))).use { vram ->
                val e = assertThrows<UFormException.Unsupported> { Trainer.contrastive(vram) }
                assertTrue(e.message!!.contains("RAM models"), e.message)
            }
        }
    }

    @Test
    fun `29 a live trainer keeps its model in use, use releases it`() = withModel { _, model ->
        val first = Trainer.contrastive(model)
        val e = assertThrows<UFormException.InUse> { model.free() }
        assertTrue(e.message!!.contains("1 trainer borrows it; free it first"), e.message)
        val second = Trainer.contrastive(model)
        assertTrue(assertThrows<UFormException.InUse> { model.free() }.message!!.contains("2 trainers borrow it"))
        assertEquals(1u, model.encodeText(listOf("still usable")).rows) // refused, not broken
        second.use { }
        assertThrows<IllegalStateException> { second.step(listOf("a"), listOf("p")) }
        first.free()
        first.free()
        Trainer.contrastive(model).use { assertThrows<UFormException.InUse> { model.free() } }
        // Nothing borrows the model now: withModel's free succeeds.
    }
}
