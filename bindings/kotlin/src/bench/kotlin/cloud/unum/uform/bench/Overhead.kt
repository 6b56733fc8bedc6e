// The Kotlin binding-overhead benchmark (`cargo xtask bench overhead`; by hand: `mvn -B -q -Pbench test-compile
// exec:exec@overhead` after `cargo build --release -p uform-uniffi`). Nanoseconds per call of `capabilitiesCompiled()`
// and of `drain()` on an idle one-thread executor, side by side in the same run with a bare no-op exported by the same
// library and bound the way uniffi binds its functions: JNA direct mapping, `Native.register` on an object of
// `external fun`s. Prints on stdout
//   overhead kotlin: noop_ns=N capabilities_ns=C drain_ns=D capabilities/noop=C/N drain/noop=D/N
// and on stderr the detail: a second peer that takes a RustCallStatus (what every uniffi call passes), and the
// pieces of `drain()`. Not a test: it asserts nothing. Warm-up, then best-of-rounds, interleaved across passes so
// that drift in the machine's speed touches every subject alike.

package cloud.unum.uform.bench

import cloud.unum.uform.Executor
import cloud.unum.uform.ExecutorForRamConfig
import cloud.unum.uform.FfiConverterTypeMood
import cloud.unum.uform.Mood
import cloud.unum.uform.RustBuffer
import cloud.unum.uform.capabilitiesCompiled
import com.sun.jna.Native
import com.sun.jna.Structure
import java.io.File
import java.util.Locale

/** The layout of uniffi's `RustCallStatus`, as the generated `UniffiRustCallStatus` declares it. */
@Structure.FieldOrder("code", "error_buf")
class BenchCallStatus : Structure() {
    @JvmField var code: Byte = 0

    @JvmField var error_buf: RustBuffer.ByValue = RustBuffer.ByValue()
}

/** The peers, bound as the generated `UniffiLib` binds the library: direct mapping of an object's external funs. */
internal object BenchLib {
    init {
        Native.register(BenchLib::class.java, "uform_uniffi")
    }

    external fun uform_bench_noop()

    external fun uform_bench_noop_status(status: BenchCallStatus)
}

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

/** How many distinct files named libuform_uniffi.so this process has mapped: the peers must share uniffi's copy. */
private fun mappedCopies() = File("/proc/self/maps").readLines().filter { it.endsWith("libuform_uniffi.so") }.map { it.substringAfterLast(' ') }.toSet()

private fun rssMb() = File("/proc/self/status").readLines().first { it.startsWith("VmRSS:") }.split(Regex("\\s+"))[1].toLong() / 1024

fun main() {
    val executor = Executor.forRam(ExecutorForRamConfig(threads = 1u))
    executor.drain()
    capabilitiesCompiled() // loads the library through uniffi first
    val subjects = listOf(
        Subject("noop") { n -> repeat(n) { BenchLib.uform_bench_noop() }; n.toLong() },
        Subject("noop_status") { n -> repeat(n) { BenchLib.uform_bench_noop_status(BenchCallStatus()) }; n.toLong() },
        // The same call with one status reused: what JNA's write-before and read-after of the Structure cost.
        Subject("status_reused") { n -> val status = BenchCallStatus(); repeat(n) { BenchLib.uform_bench_noop_status(status) }; n.toLong() },
        Subject("capabilities") { n -> var s = 0L; repeat(n) { s += capabilitiesCompiled().length }; s },
        Subject("drain") { n -> repeat(n) { executor.drain() }; n.toLong() },
        // One piece of drain(): lowering the Mood argument into a RustBuffer (one uniffi call) and freeing it.
        Subject("mood_buffer") { n ->
            var s = 0L
            repeat(n) {
                val buffer = FfiConverterTypeMood.lower(Mood.PARKED)
                s += buffer.len
                RustBuffer.free(buffer)
            }
            s
        },
    )
    val copies = mappedCopies()
    check(copies.size == 1) { "the peers and uniffi must share one loaded library, found $copies" }
    // JNA tries the system search path (LD_LIBRARY_PATH, which `cargo run` points at target/debug) before the class
    // path; measure the library this build packed (the release build), not whatever the environment offers.
    val packed = BenchLib::class.java.getResource("/linux-x86-64/libuform_uniffi.so")
    if (packed?.protocol == "file") {
        check(File(packed.toURI()).canonicalPath == File(copies.single()).canonicalPath) {
            "loaded ${copies.single()} instead of the packed $packed: unset LD_LIBRARY_PATH and jna.library.path"
        }
    }
    val rssBefore = rssMb()
    for (subject in subjects) subject.warmUp()
    repeat(PASSES) { for (subject in subjects) subject.measure() }
    val rssAfter = rssMb()
    executor.free()
    executor.close()

    val ns = subjects.associate { it.name to it.best }
    val (noop, status, reused, capabilities, drain) = listOf("noop", "noop_status", "status_reused", "capabilities", "drain").map { ns.getValue(it) }
    val mood = ns.getValue("mood_buffer")
    System.err.println(
        "kotlin (JNA ${Native.VERSION}, direct mapping; Java ${Runtime.version()}; best of $rounds rounds x $PASSES passes; iterations " +
            subjects.joinToString { "${it.name} ${it.iterations}" } + "; library ${copies.single()}; sink ${subjects.sumOf { it.sink } != 0L})",
    )
    System.err.println(
        ("kotlin: noop %.1f ns; noop taking a fresh RustCallStatus, as every uniffi call does, %.1f ns (%.1f ns of it allocating the " +
            "Structure and its nested RustBuffer, %.1f ns JNA's reflective write before and read after the call); " +
            "capabilitiesCompiled %.1f ns; drain %.1f ns")
            .format(Locale.ROOT, noop, status, status - reused, reused - noop, capabilities, drain),
    )
    System.err.println(
        ("kotlin: VmRSS %d MB before, %d MB after the runs: each uniffi call allocates JNA Memory (the RustCallStatus, " +
            "RustBuffers) that JNA's single Cleaner thread frees later; when the calling thread keeps the CPU busy, " +
            "that backlog and the collector's work on it are part of the time above")
            .format(Locale.ROOT, rssBefore, rssAfter),
    )
    System.err.println(
        ("kotlin: where it goes: capabilitiesCompiled() is 2 uniffi calls (the function, returning a RustBuffer by value, then " +
            "freeing that buffer) plus UTF-8 decoding; drain() is 3 (clone the handle, allocate a RustBuffer for the Mood " +
            "and write it, drain), each with a fresh RustCallStatus; lowering the Mood into a RustBuffer and freeing it " +
            "alone takes %.1f ns")
            .format(Locale.ROOT, mood),
    )
    println(
        "overhead kotlin: noop_ns=%.1f capabilities_ns=%.1f drain_ns=%.1f capabilities/noop=%.2f drain/noop=%.2f"
            .format(Locale.ROOT, noop, capabilities, drain, capabilities / noop, drain / noop),
    )
}
