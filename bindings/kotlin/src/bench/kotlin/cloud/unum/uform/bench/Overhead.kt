// The Kotlin binding-overhead benchmark (`cargo xtask bench overhead`; by hand: `mvn -B -q -Pbench test-compile
// exec:exec@overhead` after `cargo build --release -p uform-jni`). Nanoseconds per call of `capabilitiesCompiled()`
// and of `drain()` on an idle one-thread executor, side by side in the same run with a bare JNI no-op exported by the
// same library and declared like every generated function (`UFormNative.benchNoop`, an `@JvmStatic external fun`).
// Prints on stdout
//   overhead kotlin: noop_ns=N capabilities_ns=C drain_ns=D capabilities/noop=C/N drain/noop=D/N
// and on stderr the detail. Not a test: it asserts nothing. Warm-up, then best-of-rounds, interleaved across passes
// so that drift in the machine's speed touches every subject alike.

package cloud.unum.uform.bench

import cloud.unum.uform.Executor
import cloud.unum.uform.ExecutorForRamConfig
import cloud.unum.uform.Model
import cloud.unum.uform.ModelLoadRamConfig
import cloud.unum.uform.Mood
import cloud.unum.uform.Reader
import cloud.unum.uform.UFormNative
import cloud.unum.uform.capabilitiesCompiled
import java.io.File
import java.util.Locale

private val iterationsOverride = System.getenv("UFORM_BENCH_ITERATIONS")?.toInt()
private val rounds = System.getenv("UFORM_BENCH_ROUNDS")?.toInt() ?: 5
private const val PASSES = 3
private const val ROUND_NANOS = 40_000_000L // what one round of a subject should take once calibrated

/** A subject: [name] and a loop that makes [n] calls, returning something to keep the JIT from dropping them. */
private class Subject(val name: String, val loop: (n: Int) -> Long) {
    var iterations = 1000
    var best = Double.MAX_VALUE
    var sink = 0L

    fun warmUp() {
        val deadline = System.nanoTime() + 500_000_000L
        while (System.nanoTime() < deadline) sink += loop(10_000)
        // Calibrate: iterations so that one round takes about ROUND_NANOS.
        val start = System.nanoTime()
        sink += loop(20_000)
        val ns = (System.nanoTime() - start) / 20_000.0
        iterations = iterationsOverride ?: (ROUND_NANOS / ns).toInt().coerceIn(10_000, 20_000_000)
    }

    fun measure() {
        repeat(rounds) {
            val start = System.nanoTime()
            sink += loop(iterations)
            best = minOf(best, (System.nanoTime() - start).toDouble() / iterations)
        }
    }
}

/** The files this process has mapped that hold a UForm native library (the loader's deleted temporary copy). */
private fun mappedCopies() = File("/proc/self/maps").readLines().mapNotNull { it.split(Regex("\\s+"), 6).getOrNull(5) }.filter { "uform" in it && ".so" in it }.toSet()

private fun rssMb() = File("/proc/self/status").readLines().first { it.startsWith("VmRSS:") }.split(Regex("\\s+"))[1].toLong() / 1024

fun main() {
    val executor = Executor.forRam(ExecutorForRamConfig(threads = 1u))
    executor.drain()
    capabilitiesCompiled() // loads the library
    val subjects = listOf(
        Subject("noop") { n -> repeat(n) { UFormNative.benchNoop() }; n.toLong() },
        Subject("capabilities") { n -> var s = 0L; repeat(n) { s += capabilitiesCompiled().length }; s },
        Subject("drain") { n -> repeat(n) { executor.drain() }; n.toLong() },
        Subject("drain_spinning") { n -> repeat(n) { executor.drain(Mood.SPINNING) }; n.toLong() },
        // A 32 x 384 matrix returned as encodeText returns one: the encoded byte[], then one bulk read into a FloatArray.
        Subject("matrix") { n -> var s = 0L; repeat(n) { s += Reader(UFormNative.benchMatrix()).matrix().data.size }; s },
    )
    val copies = mappedCopies()
    check(copies.size == 1) { "one UForm library must be loaded, found $copies" }
    val rssBefore = rssMb()
    for (subject in subjects) subject.warmUp()
    repeat(PASSES) { for (subject in subjects) subject.measure() }
    val rssAfter = rssMb()
    executor.free()
    executor.close()
    var encodeMs = Double.NaN
    System.getenv("UFORM_TEST_MODEL_DIR")?.let { dir ->
        val encoder = Executor.forRam(ExecutorForRamConfig(threads = 2u))
        Model.loadRam(dir, ModelLoadRamConfig(executor = encoder)).use { model ->
            val texts = List(32) { "a short sentence, number $it, about what embeddings are for" }
            model.encodeText(texts)
            val times = List(15) {
                val start = System.nanoTime()
                model.encodeText(texts)
                (System.nanoTime() - start) / 1e6
            }.sorted()
            encodeMs = times[7]
        }
        encoder.free()
    }

    val ns = subjects.associate { it.name to it.best }
    val (noop, capabilities, drain, spinning) = listOf("noop", "capabilities", "drain", "drain_spinning").map { ns.getValue(it) }
    val matrix = ns.getValue("matrix")
    System.err.println(
        "kotlin (JNI; Java ${Runtime.version()}; best of $rounds rounds x $PASSES passes; iterations " +
            subjects.joinToString { "${it.name} ${it.iterations}" } + "; library ${copies.single()}; sink ${subjects.sumOf { it.sink } != 0L})",
    )
    System.err.println(
        "kotlin: noop %.1f ns; capabilitiesCompiled %.1f ns (a constant: read once, then cached); drain %.1f ns; drain(SPINNING) %.1f ns; VmRSS %d MB before, %d MB after the runs"
            .format(Locale.ROOT, noop, capabilities, drain, spinning, rssBefore, rssAfter),
    )
    System.err.println(
        "kotlin: returning a 32 x 384 FloatArray %.0f ns; encodeText of 32 short texts %.2f ms".format(Locale.ROOT, matrix, encodeMs),
    )
    println(
        "overhead kotlin: noop_ns=%.1f capabilities_ns=%.1f drain_ns=%.1f capabilities/noop=%.2f drain/noop=%.2f matrix_ns=%.0f encode_ms=%.2f"
            .format(Locale.ROOT, noop, capabilities, drain, capabilities / noop, drain / noop, matrix, encodeMs),
    )
}
