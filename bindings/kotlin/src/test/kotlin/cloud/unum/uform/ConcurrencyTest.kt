// Concurrency (issue 9): executors and meshes are documented as safe to share between threads, every method callable
// from any thread with calls overlapping. Each test runs its threads under a deadline (a deadlock fails the test
// instead of hanging the build) and checks that every call either succeeded or threw the documented exception:
// `UFormException.FreedHandle` after `free()`, `UFormException.InUse` for freeing an executor a mesh borrows, and
// `IllegalStateException` after `close()`.

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.reflect.KClass

private const val THREADS = 8
private const val DEADLINE_SECONDS = 60L

/** Tallies outcomes by name; anything not allowed is kept with its stack trace. */
private class Outcomes(private vararg val allowed: KClass<out Throwable>) {
    val counts = ConcurrentHashMap<String, AtomicInteger>()
    val unexpected = ConcurrentHashMap.newKeySet<String>()

    fun record(call: () -> Unit) {
        val name = try {
            call()
            "ok"
        } catch (t: Throwable) {
            if (allowed.none { it.isInstance(t) }) unexpected += t.stackTraceToString().lines().take(6).joinToString("\n")
            t.javaClass.simpleName
        }
        counts.computeIfAbsent(name) { AtomicInteger() }.incrementAndGet()
    }

    fun count(name: String) = counts[name]?.get() ?: 0

    override fun toString() = counts.entries.sortedBy { it.key }.joinToString(", ") { "${it.key} ${it.value}" }
}

/** Set when a test gave up waiting for its threads, so that loops still running stop instead of running on. */
@Volatile
private var abandoned = false

/**
 * Runs [body] on [threads] daemon threads released together, then [meanwhile] on the calling thread; fails when they
 * are not all done within the deadline (a deadlock or a livelock; the loops then stop) or when one threw.
 */
private fun together(threads: Int = THREADS, meanwhile: () -> Unit = {}, body: (index: Int) -> Unit) {
    abandoned = false
    val start = CountDownLatch(1)
    val done = CountDownLatch(threads)
    val failures = ConcurrentHashMap.newKeySet<String>()
    repeat(threads) { index ->
        Thread {
            try {
                start.await()
                body(index)
            } catch (t: Throwable) {
                failures += "thread $index: ${t.stackTraceToString().lines().take(6).joinToString("\n")}"
            } finally {
                done.countDown()
            }
        }.apply { isDaemon = true; name = "uform-test-$index" }.start()
    }
    start.countDown()
    meanwhile()
    if (!done.await(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
        abandoned = true
        fail<Unit>("threads still running after $DEADLINE_SECONDS s: a deadlock or a livelock")
    }
    assertTrue(failures.isEmpty(), failures.joinToString("\n"))
}

class ConcurrencyTest {
    @Test
    fun `eight threads create, drain and free their own executors and meshes`() {
        val baseline = ProcessStats.quietThreads()
        val outcomes = Outcomes()
        together { index ->
            repeat(300) { i ->
                outcomes.record {
                    val executor = Executor.forRam(ExecutorForRamConfig(threads = if (i % 2 == 0) 1u else 2u))
                    executor.drain(if ((index + i) % 3 == 0) Mood.SPINNING else Mood.PARKED)
                    if (i % 5 == 0) Mesh.bootstrap(executor).use { it.describe() }
                    if (i % 2 == 0) executor.free()
                    executor.close()
                }
            }
        }
        println("concurrency, own handles: $outcomes")
        assertEquals(THREADS * 300, outcomes.count("ok"), outcomes.toString())
        assertTrue(ProcessStats.settle { ProcessStats.threads() <= baseline }, "threads: baseline $baseline, now ${ProcessStats.threads()}")
    }

    @Test
    fun `one executor drained by many threads while another thread frees it`() {
        repeat(20) { round ->
            val executor = Executor.forRam(ExecutorForRamConfig(threads = 2u))
            val outcomes = Outcomes(UFormException.FreedHandle::class)
            val freed = AtomicBoolean(false)
            val succeededAfterFree = AtomicInteger()
            together(meanwhile = {
                Thread.sleep(2)
                executor.free()
                freed.set(true)
            }) { index ->
                // Keep draining until well after the free, so calls overlap it and follow it.
                var after = 0
                while (after < 200 && !abandoned) {
                    val wasFreed = freed.get()
                    outcomes.record {
                        executor.drain(if (index % 2 == 0) Mood.PARKED else Mood.SPINNING)
                        if (wasFreed) succeededAfterFree.incrementAndGet()
                    }
                    if (wasFreed) after++
                }
            }
            executor.free() // a second free does nothing
            executor.close()
            assertTrue(outcomes.unexpected.isEmpty(), "round $round: ${outcomes.unexpected.joinToString("\n")}")
            assertEquals(0, succeededAfterFree.get(), "round $round: drains that started after free() returned succeeded: $outcomes")
            assertTrue(outcomes.count("FreedHandle") >= THREADS * 200, "round $round: $outcomes")
            if (round == 0) println("concurrency, drain while free(): $outcomes")
        }
    }

    // `close()` is not a barrier (its KDoc says so): it drops the Kotlin side's reference, and the Rust object goes when the
    // count of calls in flight next reaches zero. A call that starts while another is still in flight passes the
    // check and succeeds, so under continuous overlapping use a closed handle keeps working. Once one call has seen
    // `IllegalStateException` the object is gone, and every later call must see it too; once the calls stop, it is
    // gone for sure.
    @Test
    fun `one executor drained by many threads while another thread closes it`() {
        var succeededAfterClose = 0
        repeat(20) { round ->
            val executor = Executor.forRam(ExecutorForRamConfig(threads = 2u))
            val outcomes = Outcomes(IllegalStateException::class)
            val closed = AtomicBoolean(false)
            val gone = AtomicBoolean(false)
            val resurrected = AtomicInteger()
            val afterClose = AtomicInteger()
            together(meanwhile = {
                Thread.sleep(2)
                executor.close()
                closed.set(true)
            }) { _ ->
                var after = 0
                while (after < 200 && !abandoned) {
                    val wasClosed = closed.get()
                    val wasGone = gone.get()
                    outcomes.record {
                        try {
                            executor.drain()
                            if (wasGone) resurrected.incrementAndGet()
                            if (wasClosed) afterClose.incrementAndGet()
                        } catch (e: IllegalStateException) {
                            gone.set(true)
                            throw e
                        }
                    }
                    if (wasClosed) after++
                }
            }
            assertThrows<IllegalStateException> { executor.drain() }
            assertTrue(outcomes.unexpected.isEmpty(), "round $round: ${outcomes.unexpected.joinToString("\n")}")
            assertEquals(0, resurrected.get(), "round $round: calls succeeded after one saw the object gone: $outcomes")
            succeededAfterClose += afterClose.get()
            if (round == 0) println("concurrency, drain while close(): $outcomes")
        }
        println("concurrency, drain while close(): $succeededAfterClose of ${20 * THREADS * 200} drains that started after close() returned still ran, as calls overlapped")
    }

    @Test
    fun `many threads free the same executor at once and all succeed`() {
        repeat(50) {
            val executor = Executor.forRam(ExecutorForRamConfig(threads = 2u))
            val outcomes = Outcomes()
            together { outcomes.record { executor.free() } }
            executor.close()
            assertEquals(THREADS, outcomes.count("ok"), outcomes.toString())
        }
    }

    @Test
    fun `a mesh of one described from many threads while it is freed, then closed`() {
        repeat(20) { round ->
            Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
                val mesh = Mesh.bootstrap(executor)
                val outcomes = Outcomes(UFormException.FreedHandle::class, IllegalStateException::class)
                val freed = AtomicBoolean(false)
                val closed = AtomicBoolean(false)
                val describedAfterFree = AtomicInteger()
                together(meanwhile = {
                    Thread.sleep(2)
                    mesh.free()
                    freed.set(true)
                    Thread.sleep(2)
                    mesh.close()
                    closed.set(true)
                }) { _ ->
                    var after = 0
                    while (after < 100 && !abandoned) {
                        val wasFreed = freed.get()
                        val wasClosed = closed.get()
                        outcomes.record {
                            val d = mesh.describe()
                            check(d.hostDomainIndex == 0u && d.hostDomainCount == 1u) { "described $d" }
                            if (wasFreed) describedAfterFree.incrementAndGet()
                        }
                        if (wasClosed) after++
                    }
                }
                assertThrows<IllegalStateException> { mesh.describe() }
                assertTrue(outcomes.unexpected.isEmpty(), "round $round: ${outcomes.unexpected.joinToString("\n")}")
                assertEquals(0, describedAfterFree.get(), "round $round: describe succeeded after free() returned: $outcomes")
                if (round == 0) println("concurrency, describe while free() then close(): $outcomes")
                executor.free() // the mesh is gone, so nothing borrows the executor
            }
        }
    }

    @Test
    fun `meshes bootstrapped on one executor from many threads while another thread tries to free it`() {
        var inUse = 0
        repeat(10) { round ->
            val executor = Executor.forRam(ExecutorForRamConfig(threads = 2u))
            val bootstraps = Outcomes(UFormException.FreedHandle::class)
            val frees = Outcomes(UFormException.InUse::class)
            val joined = AtomicInteger()
            val stop = AtomicBoolean(false)
            together(meanwhile = {
                // Once meshes are being made, free fails as in use while some mesh borrows the executor; once it
                // succeeds, every later bootstrap fails as freed.
                while (joined.get() < 50 && !stop.get() && !abandoned) Thread.onSpinWait()
                while (!stop.get() && !abandoned) {
                    frees.record { executor.free() }
                    Thread.sleep(0, 100_000)
                }
            }) { index ->
                repeat(100) {
                    Thread.sleep(0, 50_000) // leaves moments when no mesh is alive, so a free can succeed mid-run
                    bootstraps.record {
                        Mesh.bootstrap(executor).use { mesh ->
                            joined.incrementAndGet()
                            mesh.describe()
                            executor.drain()
                        }
                    }
                }
                if (index == 0) stop.set(true)
            }
            stop.set(true)
            frees.record { executor.free() }
            executor.close()
            assertTrue(bootstraps.unexpected.isEmpty(), "round $round: bootstrap: ${bootstraps.unexpected.joinToString("\n")}")
            assertTrue(frees.unexpected.isEmpty(), "round $round: free: ${frees.unexpected.joinToString("\n")}")
            assertTrue(frees.count("ok") >= 1, "round $round: free finally succeeded: $frees")
            inUse += frees.count("InUse")
            if (round == 0) println("concurrency, bootstrap while free(): bootstrap $bootstraps; free $frees")
        }
        println("concurrency, bootstrap while free(): $inUse frees refused as in use over 10 rounds")
    }

    @Test
    fun `many threads free an executor a mesh borrows, all in use, then all succeed once the mesh is closed`() {
        val executor = Executor.forRam(ExecutorForRamConfig(threads = 2u))
        val mesh = Mesh.bootstrap(executor)
        val refused = Outcomes(UFormException.InUse::class)
        together { refused.record { executor.free() } }
        assertEquals(THREADS, refused.count("InUse"), refused.toString())
        mesh.describe()
        executor.drain()
        mesh.close()
        val freed = Outcomes()
        together { freed.record { executor.free() } }
        assertEquals(THREADS, freed.count("ok"), freed.toString())
        executor.close()
    }
}
