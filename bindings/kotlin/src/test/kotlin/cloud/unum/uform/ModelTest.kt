// Model and encodeText scenarios 18–25 of SCENARIOS.md in Kotlin, numbered after the scenario each covers, and bf16
// models (issue 33).
// The encode tests need UFORM_TEST_MODEL_DIR and UFORM_TEST_REFERENCE, which `cargo xtask test kotlin` sets.

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assumptions.assumeTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.ByteBuffer
import java.nio.ByteOrder
import java.nio.file.Path
import kotlin.math.abs
import kotlin.math.sqrt

/** name, dtype, shape, bytes: several dtypes and shapes, a zero-sized tensor and a scalar among them. */
private val TENSORS = listOf(
    Triple("encoder.weight", "F32", listOf(2L, 3L)) to 24L,
    Triple("embeddings", "BF16", listOf(4L)) to 8L,
    Triple("position_ids", "I64", listOf(1L, 3L)) to 24L,
    Triple("empty", "U8", listOf(0L)) to 0L,
    Triple("norm.bias", "F16", listOf(2L, 2L)) to 8L,
    Triple("mask", "BOOL", listOf(3L)) to 3L,
    Triple("scale", "F64", listOf<Long>()) to 8L,
)

private fun raw(header: String, data: ByteArray): ByteArray {
    val text = header.toByteArray()
    val length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(text.size.toLong()).array()
    return length + text + data
}

private fun safetensors(tensors: List<Pair<Triple<String, String, List<Long>>, Long>>): ByteArray {
    var offset = 0L
    val entries = tensors.map { (t, bytes) ->
        val entry = "\"${t.first}\":{\"dtype\":\"${t.second}\",\"shape\":${t.third},\"data_offsets\":[$offset,${offset + bytes}]}"
        offset += bytes
        entry
    }
    var header = "{\"__metadata__\":{\"format\":\"pt\"}," + entries.joinToString(",") + "}"
    while (header.length % 8 != 0) header += " "
    return raw(header, ByteArray(offset.toInt()) { ((it * 31 + 7) % 256).toByte() })
}

/** The reference fixture's texts and embeddings, read with the suites' JSON reader (TestJson.kt). */
private class Reference(path: String) {
    private val json = readJsonObject(path)
    @Suppress("UNCHECKED_CAST")
    val texts: List<String> = json["texts"] as List<String>
    @Suppress("UNCHECKED_CAST")
    val embeddings: List<DoubleArray> = (json["embeddings"] as List<List<Double>>).map { it.toDoubleArray() }
    val longTextIndex: Int = (json["long_text_index"] as Double).toInt()
}

class ModelTest {
    private fun load(path: String, executor: Executor) = Model.loadRam(path, ModelLoadRamConfig(executor))

    private fun checkDescription(model: Model, path: String, architecture: String?) {
        val d = model.describe()
        assertEquals(path, d.path)
        assertEquals("safetensors", d.format)
        assertEquals(architecture, d.architecture)
        assertEquals(Residency.RAM, d.residency)
        assertEquals(emptyList<UInt>(), d.devices)
        assertEquals(TENSORS.map { (t, b) -> listOf(t.first, t.second, t.third.map { it.toULong() }, b.toULong()) },
            d.tensors.map { listOf(it.name, it.dtype, it.shape, it.bytes) })
        assertEquals(75uL, d.bytes)
    }

    @Test
    fun `18 forVram and loadVram without a GPU are unavailable with readable messages`(@TempDir dir: Path) {
        assumeTrue(gpuDevices().isEmpty(), "a GPU is present: scripts/gpu-check.sh covers loadVram")
        val e = assertThrows<UFormException.Unavailable> { Executor.forVram(ExecutorForVramConfig(devices = listOf(0u, 1u))) }
        assertTrue(e.message!!.contains("forVram"), e.message)
        val file = dir.resolve("model.safetensors").toFile().apply { writeBytes(safetensors(TENSORS)) }
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            val error = assertThrows<UFormException.Unavailable> {
                Model.loadVram(file.path, ModelLoadVramConfig(executor, listOf(0u, 1u)))
            }
            assertTrue(error.message!!.startsWith("no GPU driver") && error.message!!.contains("Model.loadRam"), error.message)
        }
    }

    @Test
    fun `19 a file, its directory and a sharded pair describe every tensor exactly`(@TempDir dir: Path) {
        val file = dir.resolve("model.safetensors").toFile().apply { writeBytes(safetensors(TENSORS)) }
        val config = dir.resolve("config.json").toFile().apply { writeText("{\"model_type\": \"bert\"}") }
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { executor ->
            for (path in listOf(file.path, dir.toString())) load(path, executor).use { checkDescription(it, path, "bert") }
            config.delete()
            load(file.path, executor).use { checkDescription(it, file.path, null) }
            val sharded = dir.resolve("sharded").toFile().apply { mkdir() }
            val names = listOf("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
            File(sharded, names[0]).writeBytes(safetensors(TENSORS.take(3)))
            File(sharded, names[1]).writeBytes(safetensors(TENSORS.drop(3)))
            val map = TENSORS.mapIndexed { i, (t, _) -> "\"${t.first}\": \"${names[if (i < 3) 0 else 1]}\"" }.joinToString(", ")
            val index = File(sharded, "model.safetensors.index.json").apply { writeText("{\"weight_map\": {$map}}") }
            for (path in listOf(index.path, sharded.path)) load(path, executor).use { checkDescription(it, path, null) }
        }
    }

    @Test
    fun `20 bad files are invalid arguments naming the file`(@TempDir dir: Path) {
        val ok = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"
        val past = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(4096).array() + "{}".toByteArray()
        val cases = listOf(
            Triple("truncated.safetensors", byteArrayOf(1, 2, 3), "fewer than the 8-byte header length"),
            Triple("past.safetensors", past, "runs past the end of the file"),
            Triple("malformed.safetensors", raw("{\"a\": {", ByteArray(0)), "not a JSON object of tensors"),
            Triple("dtype.safetensors", raw("{\"w\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", ByteArray(4)), "dtype `F33`"),
            Triple("shape.safetensors", raw("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", ByteArray(8)), "tensor `w`"),
            Triple("overlap.safetensors", raw("{$ok,\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", ByteArray(8)), "overlaps tensor `a`"),
        )
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            for ((name, bytes, fragment) in cases) {
                val path = dir.resolve(name).toFile().apply { writeBytes(bytes) }.path
                val e = assertThrows<UFormException.InvalidArgument>(name) { load(path, executor) }
                assertTrue(e.message!!.contains(path) && e.message!!.contains(fragment), e.message)
            }
            dir.resolve("s1.safetensors").toFile().writeBytes(safetensors(listOf(Triple("a", "U8", listOf(2L)) to 2L)))
            val index = dir.resolve("missing.index.json").toFile()
            index.writeText("{\"weight_map\": {\"a\": \"s1.safetensors\", \"b\": \"s9.safetensors\"}}")
            val missingShard = assertThrows<UFormException.InvalidArgument> { load(index.path, executor) }
            assertTrue(missingShard.message!!.contains("s9.safetensors"), missingShard.message)
            val empty = dir.resolve("empty").toFile().apply { mkdir() }
            val emptyError = assertThrows<UFormException.InvalidArgument> { load(empty.path, executor) }
            assertTrue(emptyError.message!!.contains(empty.path) && emptyError.message!!.contains("without weights"), emptyError.message)
            val missing = dir.resolve("not-there").toString()
            val io = assertThrows<UFormException.Io> { load(missing, executor) }
            assertTrue(io.message!!.contains(missing), io.message)
        }
    }

    @Test
    fun `21 a live model keeps its executor in use, a freed model refuses every call, use frees it`(@TempDir dir: Path) {
        val file = dir.resolve("m.safetensors").toFile().apply { writeBytes(safetensors(TENSORS)) }.path
        val executor = Executor.forRam(ExecutorForRamConfig(threads = 1u))
        val model = load(file, executor)
        assertThrows<UFormException.InUse> { executor.free() }
        model.free()
        model.free()
        assertThrows<UFormException.FreedHandle> { model.describe() }
        assertThrows<UFormException.FreedHandle> { model.encodeText(listOf("hello")) }
        val scoped = load(file, executor)
        scoped.use { }
        // close() (what use does) drops the handle itself: later calls stop in Kotlin (bindings/kotlin/README.md).
        assertThrows<IllegalStateException> { scoped.describe() }
        executor.free()
        val e = assertThrows<UFormException.FreedHandle> { load(file, executor) }
        assertTrue(e.message!!.contains("Model.loadRam"), e.message)
        // Naming no executor takes the default one, made for these models and freed with the last of them.
        Model.loadRam(file).use { first ->
            Model.loadRam(file, ModelLoadRamConfig()).use { second -> assertEquals(first.describe(), second.describe()) }
        }
    }

    private fun closeTo(m: F32Matrix, expected: List<DoubleArray>) {
        assertEquals(expected.size.toUInt(), m.rows)
        assertEquals(384u, m.columns)
        for ((r, want) in expected.withIndex()) {
            var dot = 0.0; var gg = 0.0; var ww = 0.0; var worst = 0.0
            for (c in 0 until 384) {
                val g = m.data[r * 384 + c].toDouble()
                dot += g * want[c]; gg += g * g; ww += want[c] * want[c]
                worst = maxOf(worst, abs(g - want[c]))
            }
            val cosine = dot / sqrt(gg * ww)
            assertTrue(cosine >= 0.9999 && worst <= 1e-4, "row $r: cosine $cosine, max diff $worst")
        }
    }

    @Test
    fun `22 to 24 encodeText reproduces the reference, edge inputs, the result outlives the model`() {
        val modelDir = required("UFORM_TEST_MODEL_DIR")
        val reference = Reference(required("UFORM_TEST_REFERENCE"))
        assertEquals(29, reference.texts.size)
        val executor = Executor.forRam(ExecutorForRamConfig(threads = 2u))
        val model = load(modelDir, executor)
        closeTo(model.encodeText(reference.texts), reference.embeddings)
        assertEquals(0u, model.encodeText(emptyList()).rows)
        val long = reference.longTextIndex
        val blank = reference.texts.indexOf("")
        closeTo(model.encodeText(listOf(reference.texts[long], "")), listOf(reference.embeddings[long], reference.embeddings[blank]))
        val e = assertThrows<UFormException.InvalidArgument> { model.encodeText(listOf("fine", "nul\u0000byte")) }
        assertTrue(e.message!!.contains("texts[1]"), e.message)
        assertEquals(1u, model.encodeText(listOf("a longer text than four tokens"), EncodeTextOptions(maxTokens = 4u)).rows)
        val kept = model.encodeText(reference.texts.take(2))
        // The data is a primitive FloatArray (filled with one bulk copy, no boxed Float); matrices compare by content.
        val data: FloatArray = kept.data
        assertEquals(2 * 384, data.size)
        assertEquals(kept, kept.copy(data = data.copyOf()))
        assertEquals(kept.hashCode(), kept.copy(data = data.copyOf()).hashCode())
        model.free()
        executor.free()
        closeTo(kept, reference.embeddings.take(2))
    }

    @Test
    fun `encodeText batches within the executor's scratch limit, and a text that cannot fit is out of memory`() {
        val modelDir = required("UFORM_TEST_MODEL_DIR")
        val reference = Reference(required("UFORM_TEST_REFERENCE"))
        val texts = List(300) { "text number $it" } + reference.texts[reference.longTextIndex]
        val plain = Executor.forRam(ExecutorForRamConfig(threads = 2u))
        val small = Executor.forRam(ExecutorForRamConfig(threads = 2u, scratchLimit = 8uL shl 20))
        val tiny = Executor.forRam(ExecutorForRamConfig(threads = 2u, scratchLimit = 1uL shl 20))
        val want = load(modelDir, plain).use { it.encodeText(texts) }
        load(modelDir, small).use { model ->
            val got = model.encodeText(texts)
            var worst = 0f
            for (i in got.data.indices) worst = maxOf(worst, abs(got.data[i] - want.data[i]))
            assertTrue(worst <= 1e-6f, "batched under an 8 MiB limit: max abs difference $worst")
        }
        load(modelDir, tiny).use { model ->
            val e = assertThrows<UFormException.OutOfMemory> { model.encodeText(texts) }
            assertTrue(e.message!!.contains("texts[300]") && e.message!!.contains("scratchLimit"), e.message)
        }
        for (e in listOf(plain, small, tiny)) e.free()
    }

    @Test
    fun `25 while an encode is in flight on another thread free is in use and drain waits for it`() {
        val modelDir = required("UFORM_TEST_MODEL_DIR")
        val reference = Reference(required("UFORM_TEST_REFERENCE"))
        val batch = List(48) { "${reference.texts[reference.longTextIndex]} $it" }
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            // Idle, drain() is answered by the quiet word without calling in; in flight, the word says otherwise and
            // drain() must wait. An attempt counts once free() was refused as in use, which proves the encode was in
            // flight; one that freed the model before the encode began is repeated.
            repeat(20) { attempt ->
                executor.drain()
                val model = load(modelDir, executor)
                var encoded: Result<F32Matrix>? = null
                val encoder = Thread { encoded = runCatching { model.encodeText(batch) } }
                encoder.start()
                Thread.sleep(20)
                val inFlight = try {
                    model.free()
                    false
                } catch (e: UFormException.InUse) {
                    true
                }
                if (inFlight) {
                    assertEquals("ram", model.describe().residency.name.lowercase()) // refused, not broken
                    executor.drain() // waits for the encode ...
                    model.free() // ... so the model is no longer in use
                    encoder.join(60_000)
                    assertEquals(48u, encoded!!.getOrThrow().rows)
                    println("encode in flight: drain waited for it (attempt ${attempt + 1})")
                    return
                }
                encoder.join(60_000)
                assertTrue(encoded!!.exceptionOrNull() is UFormException.FreedHandle, "$encoded")
            }
            error("the encode never was in flight 20 ms after its thread started, in 20 attempts")
        }
    }

    @Test
    fun `bf16 models embed near the reference but not as f32, report their weight bytes, and refuse training and icelake`() {
        val modelDir = required("UFORM_TEST_MODEL_DIR")
        val reference = Reference(required("UFORM_TEST_REFERENCE"))
        val bf16 = { executor: Executor -> Model.loadRam(modelDir, ModelLoadRamConfig(executor, precision = Precision.BF16)) }
        val classes = capabilitiesAvailable().split(",")
        if ("intel-icelake" in classes) {
            Executor.forRam(ExecutorForRamConfig(cpuClass = "intel-icelake", threads = 1u)).use { icelake ->
                val e = assertThrows<UFormException.Unsupported> { bf16(icelake) }
                assertTrue(e.message!!.contains("AVX512_BF16"), e.message)
            }
        }
        val bf16Classes = classes.filter { it == "amd-genoa" || it == "intel-sapphirerapids" }
        if (bf16Classes.isEmpty()) {
            // This CPU has no bf16 instructions: its native class refuses bf16.
            Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { assertThrows<UFormException.Unsupported> { bf16(it) } }
            return
        }
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { plain ->
            load(modelDir, plain).use { f32 ->
                val f32Described = f32.describe()
                assertEquals(Precision.F32, f32Described.precision)
                val exact = f32.encodeText(reference.texts)
                for (cpuClass in bf16Classes) {
                    Executor.forRam(ExecutorForRamConfig(cpuClass = cpuClass, threads = 2u)).use { executor ->
                        bf16(executor).use { model ->
                            val d = model.describe()
                            assertEquals(Precision.BF16, d.precision)
                            val floats = d.tensors.filter { it.dtype == "F32" }
                            val values = { t: TensorDescription -> t.shape.fold(1uL) { a, b -> a * b } }
                            val matrices = floats.filter { it.shape.size >= 2 }.sumOf(values)
                            val vectors = floats.filter { it.shape.size < 2 }.sumOf(values)
                            assertEquals(2uL * matrices + 4uL * vectors, d.weightBytes)
                            assertEquals(4uL * (matrices + vectors), f32Described.weightBytes)
                            assertTrue(d.weightBytes < f32Described.weightBytes)
                            val got = model.encodeText(reference.texts)
                            for ((r, want) in reference.embeddings.withIndex()) {
                                var dot = 0.0; var gg = 0.0; var ww = 0.0
                                for (c in 0 until 384) {
                                    val g = got.data[r * 384 + c].toDouble()
                                    dot += g * want[c]; gg += g * g; ww += want[c] * want[c]
                                }
                                val cosine = dot / sqrt(gg * ww)
                                assertTrue(cosine >= 0.999, "$cpuClass row $r: cosine $cosine")
                            }
                            // Not f32's floats: the products really are bf16's.
                            val worst = got.data.indices.maxOf { abs(got.data[it] - exact.data[it]) }
                            assertTrue(worst > 1e-5f, "$cpuClass: bf16 gave f32's embeddings")
                            val e = assertThrows<UFormException.Unsupported> { Trainer.contrastive(model) }
                            assertTrue(e.message!!.contains("precision f32"), e.message)
                        }
                    }
                }
            }
        }
    }
}

/**
 * Scenarios 33–35 (issue 31): the random-weight family checkpoints of tests/fixtures/families, found beside
 * UFORM_TEST_REFERENCE (../families), against sentence-transformers' reference.
 */
class FamiliesTest {
    private val root = File(required("UFORM_TEST_REFERENCE")).parentFile.parentFile.resolve("families")

    @Suppress("UNCHECKED_CAST")
    private val reference = Json(root.resolve("reference.json").readText()).parse() as Map<String, Map<String, Any?>>

    @Suppress("UNCHECKED_CAST")
    private fun texts(family: String, key: String) = reference.getValue(family)[key] as List<String>

    @Suppress("UNCHECKED_CAST")
    private fun rows(family: String, key: String) = (reference.getValue(family)[key] as List<List<Double>>).map { it.toDoubleArray() }

    private fun maxDifference(m: F32Matrix, want: List<DoubleArray>): Double {
        assertEquals(want.size.toUInt(), m.rows)
        assertEquals(want[0].size.toUInt(), m.columns)
        var worst = 0.0
        for ((r, row) in want.withIndex()) for ((c, w) in row.withIndex()) worst = maxOf(worst, abs(m.data[r * row.size + c] - w))
        return worst
    }

    private fun <T> withModel(family: String, body: (Model) -> T): T =
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { executor ->
            Model.loadRam(root.resolve(family).path, ModelLoadRamConfig(executor)).use(body)
        }

    @Test
    fun `33 every family reproduces its sentence-transformers reference and describe says what it runs`() {
        val prompts = mapOf("distilbert" to listOf("passage", "query"), "xlm-roberta" to listOf("document", "query"), "mpnet" to listOf("document", "query"), "modernbert" to listOf("document", "query"))
        for ((family, names) in prompts) withModel(family) { model ->
            val d = model.describe()
            assertEquals(listOf<Any?>(family, family, 64u, 64u, false), listOf<Any?>(d.family, d.architecture, d.maxTokens, d.dimensions, d.crossEncoder))
            assertEquals(names, d.prompts.sorted())
            val m = model.encodeText(texts(family, "texts"))
            assertEquals(64u, m.columns)
            for ((r, want) in rows(family, "embeddings").withIndex()) {
                var cosine = 0.0; var worst = 0.0 // both unit length
                for (c in 0 until 64) {
                    cosine += m.data[r * 64 + c] * want[c]
                    worst = maxOf(worst, abs(m.data[r * 64 + c] - want[c]))
                }
                assertTrue(cosine >= 0.9999 && worst <= 1e-4, "$family text $r: cosine $cosine, max abs difference $worst")
            }
        }
        // bf16 runs every family too, where the CPU has it (issue 33): cosine >= 0.999 for every text.
        if (capabilitiesAvailable().split(",").any { it == "amd-genoa" || it == "intel-sapphirerapids" }) {
            for (family in prompts.keys) Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { executor ->
                val config = ModelLoadRamConfig(executor, precision = Precision.BF16)
                Model.loadRam(root.resolve(family).path, config).use { model ->
                    val m = model.encodeText(texts(family, "texts"))
                    for ((r, want) in rows(family, "embeddings").withIndex()) {
                        var dot = 0.0; var norm = 0.0
                        for (c in 0 until 64) {
                            val g = m.data[r * 64 + c].toDouble()
                            dot += g * want[c]; norm += g * g
                        }
                        val cosine = dot / sqrt(norm)
                        assertTrue(cosine >= 0.999, "bf16 $family text $r: cosine $cosine")
                    }
                }
            }
        }
    }

    @Test
    fun `34 35 rerank reproduces the cross-encoders' scores in input order and sorted, and bad input is refused`() {
        for (family in listOf("bert-reranker", "xlm-roberta-reranker", "modernbert-reranker")) withModel(family) { model ->
            val query = reference.getValue(family)["query"] as String
            val documents = texts(family, "documents")
            @Suppress("UNCHECKED_CAST")
            val want = reference.getValue(family)["scores"] as List<Double>
            assertTrue(model.describe().crossEncoder)
            val got = model.rerank(query, documents)
            assertEquals(documents.indices.map { it.toUInt() }, got.map { it.index })
            for ((i, s) in got.withIndex()) assertTrue(abs(s.score - want[i]) <= 1e-4, "$family document $i: ${s.score} vs ${want[i]}")
            val sorted = model.rerank(query, documents, RerankOptions(sorted = true))
            assertEquals(got.map { it.score }.sortedDescending(), sorted.map { it.score })
            for (s in sorted) assertEquals(got[s.index.toInt()].score, s.score, "$family: the sorted scores keep their indices")
            assertTrue(sorted[0].index != 0u)
            assertThrows<UFormException.InvalidArgument> { model.rerank("", documents) }
            assertThrows<UFormException.InvalidArgument> { model.rerank(query, emptyList()) }
            assertThrows<UFormException.InvalidArgument> { model.rerank(query, documents, RerankOptions(maxTokens = 0u)) }
        }
        withModel("distilbert") { model -> assertThrows<UFormException.Unsupported> { model.rerank("q", listOf("d")) } }
    }

    @Test
    fun `33 35 a prompt by name or as text and Matryoshka dimensions match sentence-transformers, bad options are refused`() {
        val texts = texts("distilbert", "texts")
        withModel("distilbert") { model ->
            val named = model.encodeText(texts, EncodeTextOptions(promptName = "query"))
            assertTrue(maxDifference(named, rows("distilbert", "prompted_query")) <= 1e-4)
            assertEquals(named, model.encodeText(texts, EncodeTextOptions(prompt = "query: ")))
            val cut = model.encodeText(texts, EncodeTextOptions(dimensions = 24u))
            assertEquals(24u, cut.columns)
            assertTrue(maxDifference(cut, rows("distilbert", "truncated_24")) <= 1e-4)
            for (bad in listOf(
                EncodeTextOptions(promptName = "nope"),
                EncodeTextOptions(prompt = "a", promptName = "query"),
                EncodeTextOptions(dimensions = 0u),
                EncodeTextOptions(dimensions = 65u),
            )) {
                assertThrows<UFormException.InvalidArgument>("$bad") { model.encodeText(texts, bad) }
            }
        }
    }
}
