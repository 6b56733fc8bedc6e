// Leaks (issue 9, scenarios 6 and 7): handles dropped without `close()` are reclaimed by the binding's Cleaner once the
// collector finds them, and create/close loops leave neither OS threads nor native memory behind.
//
// What is observable from inside the JVM: the process's OS threads (/proc/self/task: an executor of 2 threads is the
// caller plus one spawned worker, joined when Rust drops the executor) and its resident set (VmRSS in
// /proc/self/status). Both are measured after forcing collections, with a bounded retry, since the Cleaner thread
// frees handles asynchronously.

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import java.util.Locale
import java.util.concurrent.TimeUnit
import kotlin.system.exitProcess

internal object ProcessStats {
    fun threads(): Int = File("/proc/self/task").list()!!.size

    fun rssKb(): Long = File("/proc/self/status").readLines().first { it.startsWith("VmRSS:") }.split(Regex("\\s+"))[1].toLong()

    /** Forces collections (so the Cleaner runs) until [done] holds or [seconds] pass; whether it held. */
    fun settle(seconds: Double = 10.0, done: () -> Boolean): Boolean {
        val deadline = System.nanoTime() + (seconds * 1e9).toLong()
        while (true) {
            System.gc()
            System.runFinalization()
            Thread.sleep(20)
            if (done()) return true
            if (System.nanoTime() > deadline) return false
        }
    }

    /** The thread count once it has stopped falling (nothing left for the Cleaner to free). */
    fun quietThreads(): Int {
        var last = threads()
        settle(5.0) { val now = threads(); (now == last).also { last = now } }
        return last
    }
}

class LeakTest {
    @Test
    fun `executors dropped without close are reclaimed by the Cleaner and their threads joined`() {
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { it.drain() } // loads the library and the Cleaner
        val baseline = ProcessStats.quietThreads()
        val count = 200
        // Never closed and never freed: only the Cleaner can release them.
        fun abandon() = repeat(count) { Executor.forRam(ExecutorForRamConfig(threads = 2u)).drain() }
        abandon()
        val peak = ProcessStats.threads()
        // Each executor of 2 threads spawned one worker; some may already be reclaimed when the collector ran.
        assertTrue(peak > baseline, "baseline $baseline, after dropping $count executors $peak")
        val reclaimed = ProcessStats.settle { ProcessStats.threads() <= baseline }
        val after = ProcessStats.threads()
        println("cleaner: OS threads baseline $baseline, after dropping $count un-freed executors $peak, after collection $after")
        assertTrue(reclaimed, "the Cleaner left ${after - baseline} threads behind (baseline $baseline, peak $peak)")

        // Meshes (which keep their executor alive) are reclaimed the same way, executor and all.
        repeat(count) { Mesh.bootstrap(Executor.forRam(ExecutorForRamConfig(threads = 2u))).describe() }
        assertTrue(ProcessStats.settle { ProcessStats.threads() <= baseline }, "meshes left ${ProcessStats.threads() - baseline} threads behind")
    }

    @Test
    fun `create and close in a loop leaves no threads and bounded memory behind`(@TempDir dir: Path) {
        val output = inOwnJvm(dir, "cloud.unum.uform.CreateCloseLoop", LOOP_ROUNDS.toString(), LOOP_CYCLES.toString())
        val rounds = output.lines().filter { it.startsWith("round ") }.map { line ->
            val fields = line.split(" ").zipWithNext().toMap()
            Triple(fields.getValue("rss_kb").toLong(), fields.getValue("threads").toInt(), fields.getValue("seconds").toDouble())
        }
        assertEquals(LOOP_ROUNDS, rounds.size, output)
        // Rounds 0 and 1 warm up (JIT and its compiler's arenas, allocator arenas, the library's one-time state): the
        // resident set moves by a few MB while the JIT compiles, then settles; later rounds must not grow past the
        // larger of the two.
        val warmRounds = 2
        val warm = rounds.take(warmRounds).maxBy { it.first }
        val growthKb = rounds.drop(warmRounds).maxOf { it.first } - warm.first
        val seconds = rounds.drop(warmRounds).sumOf { it.third }
        val cycles = (LOOP_ROUNDS - warmRounds) * LOOP_CYCLES
        println(
            "create/close: %d cycles after %d warm-up rounds of %d, %.1f us each; VmRSS by round %s kB, growth after warm-up %d kB; OS threads by round %s"
                .format(Locale.ROOT, cycles, warmRounds, LOOP_CYCLES, seconds * 1e6 / cycles, rounds.map { it.first }, growthKb, rounds.map { it.second }),
        )
        assertTrue(rounds.all { it.second <= warm.second }, "OS threads grew: ${rounds.map { it.second }}")
        assertTrue(growthKb < 5 * 1024, "VmRSS grew by $growthKb kB over $cycles create/close cycles: ${rounds.map { it.first }}")
    }

    @Test
    fun `ten million hot calls keep VmRSS flat`(@TempDir dir: Path) {
        // drain() on an idle executor, the hottest call there is, ten million times each way: alternating moods, so
        // every call crosses into the native library, then in one mood, which the quiet word answers without
        // crossing. A call allocates nothing native and nothing the Cleaner must free, so the resident set stays where
        // the warm-up left it.
        val output = inOwnJvm(dir, "cloud.unum.uform.HotCallLoop", HOT_CALLS.toString())
        for (phase in listOf("crossing", "quiet")) {
            val fields = output.lines().single { it.startsWith("hot $phase ") }.split(" ").drop(1).zipWithNext().toMap()
            val (before, after) = fields.getValue("rss_before_kb").toLong() to fields.getValue("rss_after_kb").toLong()
            val seconds = fields.getValue("seconds").toDouble()
            println(
                "hot calls, %s: %d drain() calls on an idle executor in %.2f s (%.1f ns each); VmRSS %d kB after warm-up, %d kB after, growth %d kB"
                    .format(Locale.ROOT, phase, HOT_CALLS, seconds, seconds * 1e9 / HOT_CALLS, before, after, after - before),
            )
            assertTrue(after - before < 20 * 1024, "VmRSS grew by ${after - before} kB over $HOT_CALLS $phase drain() calls")
        }
    }

    /** Runs [mainClass] with [args] in a JVM of its own whose heap is fixed and touched up front, so VmRSS moves only
     * with native memory; its output, once it exited cleanly. */
    private fun inOwnJvm(dir: Path, mainClass: String, vararg args: String): String {
        val java = File(System.getProperty("java.home"), "bin/java").path
        val classpath = System.getProperty("surefire.test.class.path") ?: System.getProperty("java.class.path")
        val out = dir.resolve("child.out").toFile()
        val child = ProcessBuilder(
            java, "-Xms96m", "-Xmx96m", "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC", "-XX:ErrorFile=$dir/hs_err_%p.log",
            "-cp", classpath, mainClass, *args,
        ).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(out).start()
        val finished = child.waitFor(300, TimeUnit.SECONDS)
        if (!finished) child.destroyForcibly().waitFor()
        val output = out.readText()
        assertTrue(finished && child.exitValue() == 0, "$mainClass did not finish cleanly: $output")
        return output
    }
}

private const val HOT_CALLS = 10_000_000

/**
 * The hot-call loop, run by LeakTest in a JVM of its own: `<calls>`; for each phase prints
 * `hot <phase> rss_before_kb B rss_after_kb A seconds S`.
 */
object HotCallLoop {
    private fun phase(name: String, calls: Int, call: (Int) -> Unit) {
        repeat(200_000) { call(it) } // JIT, the library's one-time state
        ProcessStats.settle(0.5) { false }
        val before = ProcessStats.rssKb()
        val started = System.nanoTime()
        for (i in 0 until calls) call(i)
        val seconds = (System.nanoTime() - started) / 1e9
        ProcessStats.settle(0.5) { false }
        println("hot $name rss_before_kb $before rss_after_kb ${ProcessStats.rssKb()} seconds $seconds")
    }

    @JvmStatic
    fun main(args: Array<String>) {
        val calls = args[0].toInt()
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            phase("crossing", calls) { i -> executor.drain(if (i and 1 == 0) Mood.SPINNING else Mood.PARKED) }
            phase("quiet", calls) { executor.drain() }
        }
        System.out.flush()
        exitProcess(0)
    }
}

private const val LOOP_ROUNDS = 5
private const val LOOP_CYCLES = 10_000

/**
 * The create/close loop, run by LeakTest in a JVM of its own: `<rounds> <cycles>`; after each round it collects and
 * prints `round I rss_kb K threads T seconds S`.
 */
object CreateCloseLoop {
    private fun cycle(i: Int) {
        when (i % 8) {
            // Mostly one-thread executors: cheap, so the loop runs many cycles in a few seconds.
            0, 2, 4 -> Executor.forRam(ExecutorForRamConfig(threads = 1u)).close()
            1, 5 -> Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { it.drain(); it.free() }
            3 -> Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { it.drain(Mood.SPINNING) } // spawns and joins a worker
            6 -> Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor -> Mesh.bootstrap(executor).use { it.describe() } }
            // A failing call makes its error on both sides (the core error, then the exception); it must not leak.
            else -> runCatching { Executor.forRam(ExecutorForRamConfig(cpuClass = "not-a-class")) }
        }
    }

    @JvmStatic
    fun main(args: Array<String>) {
        val (rounds, cycles) = args.map { it.toInt() }
        repeat(rounds) { round ->
            val started = System.nanoTime()
            for (i in 0 until cycles) cycle(i)
            val seconds = (System.nanoTime() - started) / 1e9
            ProcessStats.settle(1.0) { false } // let the Cleaner free what the collector found
            println("round $round rss_kb ${ProcessStats.rssKb()} threads ${ProcessStats.threads()} seconds $seconds")
        }
        System.out.flush()
        exitProcess(0)
    }
}
