// Uses the installed `cloud.unum:uform` jar the way an application would: the native library comes out of the
// jar, errors are typed exceptions, handles are AutoCloseable. Then it trains across two JVM processes on one mesh
// at 127.0.0.1: this process is rank 0 and starts a second copy of itself (`example.MainKt rank 1 DIRECTORY`) as
// rank 1. Needs UFORM_TEST_MODEL_DIR (all-MiniLM-L6-v2), which `cargo xtask test kotlin` and `packages` set.

package example

import cloud.unum.uform.Executor
import cloud.unum.uform.ExecutorForRamConfig
import cloud.unum.uform.Mesh
import cloud.unum.uform.MeshOptions
import cloud.unum.uform.Model
import cloud.unum.uform.ModelLoadRamConfig
import cloud.unum.uform.Trainer
import cloud.unum.uform.TrainerContrastiveConfig
import cloud.unum.uform.UFormException
import cloud.unum.uform.capabilitiesAvailable
import cloud.unum.uform.gpuDevices
import java.io.File
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import kotlin.math.abs
import kotlin.system.exitProcess

private const val WORLD = 2
private const val STEPS = 3
private const val PAIRS_PER_STEP = 2
private const val HELD_OUT = "A held-out sentence that neither rank trains on."

// Each rank steps on its own pairs: rank r's step k takes pairs[(k * WORLD + r) * PAIRS_PER_STEP ...].
private val pairs = listOf(
    "How do I bake bread at home?" to "A simple recipe for homemade bread.",
    "What is the capital of France?" to "Paris is the capital of France.",
    "How fast can a cheetah run?" to "Cheetahs reach speeds of about 110 km/h.",
    "Why is the sky blue?" to "Rayleigh scattering makes the sky look blue.",
    "How do vaccines work?" to "Vaccines train the immune system to recognise a pathogen.",
    "What causes the tides?" to "The Moon's gravity pulls the oceans into tides.",
    "How do I learn to swim?" to "Swimming lessons start with floating and breathing.",
    "What do pandas eat?" to "Giant pandas eat almost nothing but bamboo.",
    "How are rainbows formed?" to "Sunlight refracts in raindrops and splits into colours.",
    "Who wrote Hamlet?" to "Hamlet is a tragedy by William Shakespeare.",
    "How does a compass work?" to "A magnetised needle aligns with Earth's magnetic field.",
    "What is photosynthesis?" to "Plants turn light, water and carbon dioxide into sugar.",
)

/** What one rank saw: each step's loss, and the held-out embedding before and after training. */
private class Trained(val losses: List<Double>, val before: FloatArray, val after: FloatArray)

private fun modelDir(): String =
    System.getenv("UFORM_TEST_MODEL_DIR") ?: error("UFORM_TEST_MODEL_DIR is not set: it names the model to train")

/** Trains this process's rank of the mesh in `directory`, one thread each so two ranks share a 2-core machine. */
private fun train(rank: Int, directory: String): Trained =
    Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
        val options = MeshOptions(
            hostDomainIndex = rank.toUInt(),
            hostDomainCount = WORLD.toUInt(),
            directory = directory,
            job = "consumer",
            timeoutSeconds = 60u,
        )
        Mesh.bootstrap(executor, options).use { mesh ->
            Model.loadRam(modelDir(), ModelLoadRamConfig(executor)).use { model ->
                val before = model.encodeText(listOf(HELD_OUT)).data
                // No dropout: both ranks must apply the very same update.
                val config = TrainerContrastiveConfig(learningRate = 2e-4, dropout = 0.0, mesh = mesh)
                val losses = Trainer.contrastive(model, config).use { trainer ->
                    (0 until STEPS).map { k ->
                        val first = (k * WORLD + rank) * PAIRS_PER_STEP
                        val mine = pairs.subList(first, first + PAIRS_PER_STEP)
                        trainer.step(mine.map { it.first }, mine.map { it.second }).loss
                    }
                }
                Trained(losses, before, model.encodeText(listOf(HELD_OUT)).data)
            }
        }
    }

/** The classpath of this program, the jar and the Kotlin runtime: under `mvn exec:java`, `java.class.path` is
 * Maven's own, so the peer's is read off where the classes it needs were loaded from. */
private fun classpath(): String =
    listOf(Trained::class.java, Trainer::class.java, Unit::class.java)
        .map { File(it.protectionDomain.codeSource.location.toURI()).path }
        .distinct()
        .joinToString(File.pathSeparator)

/** Rank 0 here and rank 1 in a second JVM; fails unless both end with the same weights, trained and finite. */
private fun trainAcrossProcesses() {
    val work = Files.createTempDirectory("uform-consumer").toFile()
    try {
        val mesh = File(work, "mesh").apply { mkdir() }
        val output = File(work, "rank-1.txt")
        val java = File(System.getProperty("java.home"), "bin/java").path
        val peer = ProcessBuilder(java, "-cp", classpath(), "example.MainKt", "rank", "1", mesh.path)
            .redirectOutput(output)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start()
        val zero = try {
            train(0, mesh.path).also { check(peer.waitFor(120, TimeUnit.SECONDS)) { "rank 1 did not finish" } }
        } finally {
            // Whatever failed here, rank 1 would otherwise wait for rank 0 until its timeout.
            if (peer.isAlive) peer.destroyForcibly()
        }
        val lines = output.readLines()
        check(peer.exitValue() == 0) { "rank 1 exited with ${peer.exitValue()}: ${lines.joinToString("\n")}" }
        fun floats(name: String) =
            lines.first { it.startsWith("$name ") }.split(" ").drop(1).map { it.toFloat() }.toFloatArray()
        val one = Trained(lines.filter { it.startsWith("loss ") }.map { it.split(" ")[1].toDouble() }, floats("before"), floats("after"))
        val moved = listOf(zero, one).mapIndexed { rank, trained ->
            // Easy pairs give losses near zero, which may round to 0: finite and not negative is what holds.
            check(trained.losses.size == STEPS && trained.losses.all { it.isFinite() && it >= 0.0 }) {
                "rank $rank: losses ${trained.losses}"
            }
            trained.before.indices.maxOf { abs(trained.before[it] - trained.after[it]) }.also {
                check(it > 1e-5) { "rank $rank: training left the held-out embedding as it was (moved $it)" }
            }
        }
        check(zero.losses != one.losses) { "the ranks stepped on the same pairs: losses ${zero.losses}" }
        check(zero.after.size == one.after.size) { "the ranks' embeddings have ${zero.after.size} and ${one.after.size} dimensions" }
        val apart = zero.after.indices.maxOf { abs(zero.after[it] - one.after[it]) }
        check(apart <= 1e-6) { "the ranks end with other weights: their held-out embeddings are $apart apart" }
        check(mesh.list()!!.isEmpty()) { "the mesh directory is left with ${mesh.list()!!.toList()}" }
        println("mesh training: $WORLD processes, $STEPS steps; the held-out embedding moved by $moved, the ranks' are $apart apart")
    } finally {
        work.deleteRecursively()
    }
}

fun main(args: Array<String>) {
    if (args.size == 3 && args[0] == "rank") {
        // The second process: its numbers go to stdout, for rank 0 to check.
        val code = try {
            val trained = train(args[1].toInt(), args[2])
            trained.losses.forEach { println("loss $it") }
            println("before " + trained.before.joinToString(" "))
            println("after " + trained.after.joinToString(" "))
            0
        } catch (e: Exception) {
            println("rank ${args[1]} failed: $e")
            1
        }
        System.out.flush()
        exitProcess(code)
    }
    println("capabilities: ${capabilitiesAvailable()}")
    println("gpus: ${gpuDevices().size}")
    Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { executor ->
        executor.drain()
        Mesh.bootstrap(executor).use { mesh -> println("mesh: ${mesh.describe()}") }
    }
    try {
        Executor.forRam(ExecutorForRamConfig(threads = 0u))
        error("threads = 0 was accepted")
    } catch (e: UFormException.InvalidArgument) {
        println("invalid argument: ${e.message}")
    }
    trainAcrossProcesses()
    println("consumer ok")
}
