// Scenarios 36–38 of SCENARIOS.md in Kotlin (issue 32): Model.encodeImage and the image-text models' encodeText on
// the random-weight CLIP, CLIP vision-only and SigLIP checkpoints of tests/fixtures/images, found beside
// UFORM_TEST_REFERENCE (../images, as FamiliesTest finds ../families), against transformers' embeddings of the
// committed files, of the processor's own crops (the same pixels) and its image × text logits. core/tests/images.rs
// is the model for these tests.

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.fail
import java.io.File
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.math.abs
import kotlin.math.exp
import kotlin.math.sqrt

class ImagesTest {
    private val fixtures = File(
        System.getenv("UFORM_TEST_REFERENCE")
            ?: fail("UFORM_TEST_REFERENCE is not set: run the suite through `cargo xtask test kotlin`"),
    ).parentFile.parentFile
    private val root = fixtures.resolve("images")

    @Suppress("UNCHECKED_CAST")
    private val reference = Json(root.resolve("reference.json").readText()).parse() as Map<String, Map<String, Any?>>

    @Suppress("UNCHECKED_CAST")
    private fun strings(name: String, key: String) = reference.getValue(name)[key] as List<String>

    @Suppress("UNCHECKED_CAST")
    private fun rows(name: String, key: String) =
        (reference.getValue(name)[key] as List<List<Double>>).map { it.toDoubleArray() }

    /** Each named file of `folder` (under tests/fixtures/images), as the ByteArray Kotlin reads a file into. */
    private fun read(folder: String, names: List<String>) = names.map { root.resolve(folder).resolve(it).readBytes() }

    private fun row(m: F32Matrix, r: Int): FloatArray = m.columns.toInt().let { m.data.copyOfRange(r * it, (r + 1) * it) }

    private fun norm(v: FloatArray) = sqrt(v.sumOf { it.toDouble() * it })

    /** The worst cosine between `m`'s rows and `want`'s, row by row, with the row it was found at (NaN counts worst). */
    private fun worstCosine(m: F32Matrix, want: List<DoubleArray>): Pair<Double, Int> {
        assertEquals(want.size.toUInt(), m.rows)
        assertEquals(want[0].size.toUInt(), m.columns)
        var worst = Double.POSITIVE_INFINITY
        var at = -1
        for ((r, w) in want.withIndex()) {
            val g = row(m, r)
            var dot = 0.0
            for (c in g.indices) dot += g[c] * w[c]
            val cosine = dot / (norm(g) * sqrt(w.sumOf { it * it }))
            if (cosine.isNaN() || cosine < worst) {
                worst = cosine
                at = r
            }
        }
        return worst to at
    }

    private fun <T> withModel(name: String, precision: Precision? = null, body: (Model) -> T): T =
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { executor ->
            Model.loadRam(root.resolve(name).path, ModelLoadRamConfig(executor, precision = precision)).use(body)
        }

    @Test
    fun `36 every checkpoint embeds the committed files and the processor's crops as transformers, normalised by default`() {
        for (name in listOf("clip", "clip-vision", "siglip")) withModel(name) { model ->
            val family = name.substringBefore('-')
            val files = read("files", strings(name, "files"))
            assertEquals(13, files.size)
            val fromFiles = model.encodeImage(files, EncodeImageOptions(normalize = false))
            val (cosine, at) = worstCosine(fromFiles, rows(name, "image_embeds"))
            println("$name: worst cosine from the files $cosine (files[$at])")
            assertTrue(cosine >= 0.999, "$name: files[$at] at cosine $cosine")
            // The processor's own crops are the same pixels: nothing left to the decoder but PNG.
            val crops = read("crops/$family", strings(name, "crops"))
            val raw = model.encodeImage(crops, EncodeImageOptions(normalize = false))
            val (exact, exactAt) = worstCosine(raw, rows(name, "crop_embeds"))
            println("$name: worst cosine from the same pixels $exact (crops[$exactAt])")
            assertTrue(exact >= 0.9999, "$name: crops[$exactAt] at cosine $exact")
            // normalize = false keeps transformers' lengths (4 to 7 for these checkpoints, not 1) ...
            for ((r, want) in rows(name, "crop_embeds").withIndex()) {
                val wantNorm = sqrt(want.sumOf { it * it })
                assertTrue(abs(wantNorm - 1.0) > 0.5, "$name: the reference's crops[$r] is already unit length")
                assertTrue(abs(norm(row(raw, r)) - wantNorm) <= 1e-3 * wantNorm, "$name: crops[$r] of norm ${norm(row(raw, r))}, not $wantNorm")
            }
            // ... and absent (or null) normalises: the same rows scaled to unit length, in input order.
            val normalised = model.encodeImage(crops)
            assertEquals(normalised, model.encodeImage(crops, EncodeImageOptions(normalize = null)))
            assertEquals(normalised, model.encodeImage(crops, EncodeImageOptions(normalize = true)))
            assertEquals(crops.size.toUInt(), normalised.rows)
            for (r in crops.indices) {
                val got = row(normalised, r)
                assertTrue(abs(norm(got) - 1.0) < 1e-5, "$name: crops[$r] normalised to norm ${norm(got)}")
                val scaled = row(raw, r)
                val n = norm(scaled)
                val worst = got.indices.maxOf { abs(got[it] - scaled[it] / n) }
                assertTrue(worst < 1e-5, "$name: crops[$r] normalised differs from raw / norm by $worst")
            }
            val d = model.describe()
            assertEquals(if (name == "clip-vision") listOf("image") else listOf("text", "image"), d.towers, name)
            assertEquals(family, d.family, name)
            assertEquals(d.dimensions, normalised.columns, name)
        }
    }

    @Test
    fun `36 encodeText embeds the texts as transformers and image x text similarity matches its logits_per_image`() {
        for (name in listOf("clip", "siglip")) withModel(name) { model ->
            val images = model.encodeImage(read("files", strings(name, "files")))
            val texts = model.encodeText(strings(name, "texts"))
            val (cosine, at) = worstCosine(texts, rows(name, "text_embeds"))
            assertTrue(cosine >= 0.9999, "$name: texts[$at] at cosine $cosine")
            for (t in 0 until texts.rows.toInt()) assertTrue(abs(norm(row(texts, t)) - 1.0) < 1e-5, "$name: texts[$t]")
            assertEquals(images.columns, texts.columns)
            val scale = exp(reference.getValue(name)["logit_scale"] as Double)
            val bias = reference.getValue(name)["logit_bias"] as Double? ?: 0.0
            val want = rows(name, "logits_per_image")
            assertEquals(images.rows.toInt(), want.size)
            var worst = 0.0
            for (i in want.indices) {
                val image = row(images, i)
                assertEquals(texts.rows.toInt(), want[i].size)
                for (t in want[i].indices) {
                    val text = row(texts, t)
                    var dot = 0.0
                    for (c in image.indices) dot += image[c].toDouble() * text[c]
                    worst = maxOf(worst, abs(scale * dot + bias - want[i][t]))
                }
            }
            println("$name: logits_per_image within $worst (scale $scale)")
            assertTrue(worst < 0.02 * scale, "$name: logits differ by $worst")
            // The text tower takes no prompt and no token limit; Matryoshka dimensions it does.
            assertThrows<UFormException.Unsupported>(name) { model.encodeText(listOf("a dog"), EncodeTextOptions(prompt = "query: ")) }
            assertThrows<UFormException.Unsupported>(name) { model.encodeText(listOf("a dog"), EncodeTextOptions(maxTokens = 4u)) }
            assertEquals(8u, model.encodeText(listOf("a dog"), EncodeTextOptions(dimensions = 8u)).columns)
        }
    }

    @Test
    fun `36 bf16 embeds the committed files near the reference where the CPU has it, and is refused where not`() {
        val classes = capabilitiesAvailable().split(",")
        if (classes.none { it == "amd-genoa" || it == "intel-sapphirerapids" }) {
            // This CPU has no bf16 instructions: its native class refuses bf16 (as ModelTest's bf16 test checks).
            Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
                val config = ModelLoadRamConfig(executor, precision = Precision.BF16)
                assertThrows<UFormException.Unsupported> { Model.loadRam(root.resolve("clip").path, config) }
            }
            return
        }
        for (name in listOf("clip", "clip-vision", "siglip")) {
            val files = read("files", strings(name, "files"))
            val f32 = withModel(name) { it.encodeImage(files) }
            withModel(name, Precision.BF16) { model ->
                assertEquals(Precision.BF16, model.describe().precision)
                val got = model.encodeImage(files, EncodeImageOptions(normalize = false))
                val (cosine, at) = worstCosine(got, rows(name, "image_embeds"))
                println("$name bf16: worst cosine from the files $cosine (files[$at])")
                assertTrue(cosine >= 0.999, "$name bf16: files[$at] at cosine $cosine")
                assertNotEquals(f32, model.encodeImage(files), "$name: bf16 gave f32's embeddings")
            }
        }
    }

    @Test
    fun `37 any ByteArray is an image, and encodes on other threads give the blocking call's rows`() {
        withModel("clip") { model ->
            val files = read("files", strings("clip", "files"))
            val want = model.encodeImage(files)
            // Kotlin has no array views: a ByteArray cut out of a larger one is the way to pass part of a buffer.
            val padded = ByteArray(7) { 0x55 } + files[3] + ByteArray(5)
            val cut = padded.copyOfRange(7, 7 + files[3].size)
            assertEquals(row(want, 3).toList(), model.encodeImage(listOf(cut)).data.toList())
            // The same ByteArray twice in one list is two images.
            val twice = model.encodeImage(listOf(files[0], files[0]))
            assertEquals(2u, twice.rows)
            assertEquals(row(twice, 0).toList(), row(twice, 1).toList())
            // Kotlin's form of scenario 25: the blocking call on other threads, overlapping, as futures.
            val pool = Executors.newFixedThreadPool(3)
            try {
                val futures = List(3) { pool.submit(Callable { model.encodeImage(files) }) }
                for (f in futures) assertEquals(want, f.get(120, TimeUnit.SECONDS))
            } finally {
                pool.shutdownNow()
            }
        }
    }

    @Test
    fun `38 hostile images are invalid arguments naming their index, and the model still embeds`() {
        withModel("clip") { model ->
            val good = root.resolve("files/photo.jpg").readBytes()
            val hostile = root.resolve("hostile").listFiles()!!.sortedBy { it.name }.map { it.name to it.readBytes() }
            assertEquals(
                listOf("animated.gif", "animated.png", "animated.webp", "bomb.png", "not-an-image.bin", "truncated.jpg"),
                hostile.map { it.first },
            )
            for ((name, bytes) in hostile + ("<empty>" to ByteArray(0))) {
                val e = assertThrows<UFormException.InvalidArgument>(name) { model.encodeImage(listOf(good, good, bytes)) }
                assertTrue(e.message!!.contains("images[2]"), "$name: ${e.message}")
                if (name.contains("bomb")) assertTrue(e.message!!.contains("budget"), "$name: ${e.message}")
            }
            // Nothing was lost: the model still embeds, and an empty list is no rows.
            val after = model.encodeImage(listOf(good))
            assertEquals(1u, after.rows)
            assertTrue(abs(norm(after.data) - 1.0) < 1e-5)
            val none = model.encodeImage(emptyList())
            assertEquals(0u, none.rows)
            assertEquals(0, none.data.size)
        }
    }

    @Test
    fun `38 a text-only model refuses encodeImage, a vision-only one encodeText, an image-text one rerank`() {
        val photo = root.resolve("files/photo.jpg").readBytes()
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { executor ->
            Model.loadRam(fixtures.resolve("families/distilbert").path, ModelLoadRamConfig(executor)).use { text ->
                assertEquals(listOf("text"), text.describe().towers)
                val e = assertThrows<UFormException.Unsupported> { text.encodeImage(listOf(photo)) }
                assertTrue(e.message!!.isNotEmpty())
            }
        }
        withModel("clip-vision") { vision ->
            assertThrows<UFormException.Unsupported> { vision.encodeText(listOf("a dog")) }
        }
        withModel("clip") { clip ->
            assertThrows<UFormException.Unsupported> { clip.rerank("a dog", listOf("a cat")) }
        }
    }
}
