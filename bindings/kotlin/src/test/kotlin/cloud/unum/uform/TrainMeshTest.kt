// Trainer-across-the-mesh scenarios 30–32 of SCENARIOS.md in Kotlin: real JVM processes (TrainMeshPeer) on one mesh
// at 127.0.0.1 against the committed torch DDP fixtures (tests/fixtures/train/ddp2.json, ddp4.json, beside
// UFORM_TEST_TRAIN_REFERENCE, which `cargo xtask test kotlin` sets).

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.fail
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import kotlin.math.abs
import kotlin.math.sqrt

class TrainMeshTest {
    private fun fixture(world: Int): File {
        val reference = System.getenv("UFORM_TEST_TRAIN_REFERENCE")
            ?: fail("UFORM_TEST_TRAIN_REFERENCE is not set: run the suite through `cargo xtask test kotlin`")
        return File(File(reference).parentFile, "ddp$world.json")
    }

    /** Runs `world` peers in `role`; returns each one's exit code and output lines, in rank order. */
    private fun run(role: String, world: Int, directory: Path, steps: Int): List<Pair<Int, List<String>>> {
        val java = File(System.getProperty("java.home"), "bin/java").toString()
        val classpath = System.getProperty("surefire.test.class.path") ?: System.getProperty("java.class.path")
        val fixture = fixture(if (world == 4) 4 else 2).toString()
        val peers = (0 until world).map { rank ->
            ProcessBuilder(java, "-cp", classpath, "cloud.unum.uform.TrainMeshPeer", role, fixture, directory.toString(), rank.toString(), world.toString(), steps.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start()
        }
        return peers.mapIndexed { rank, peer ->
            val output = peer.inputStream.bufferedReader().readText()
            assertTrue(peer.waitFor(300, TimeUnit.SECONDS), "rank $rank did not finish")
            peer.exitValue() to output.lines()
        }
    }

    private fun cosine(a: List<Double>, b: List<Double>): Double {
        var dot = 0.0
        var aa = 0.0
        var bb = 0.0
        for (i in a.indices) {
            dot += a[i] * b[i]
            aa += a[i] * a[i]
            bb += b[i] * b[i]
        }
        return dot / sqrt(aa * bb)
    }

    /** `world` processes train `steps` steps: each rank's numbers are torch DDP's, all end with the same weights, and
     * after all 20 steps the held-out embeddings are torch DDP's. */
    private fun reproduces(world: Int, steps: Int, directory: Path) {
        @Suppress("UNCHECKED_CAST")
        val f = Json(fixture(world).readText()).parse() as Map<String, Any?>
        @Suppress("UNCHECKED_CAST")
        val ranks = f["ranks"] as List<Map<String, Any?>>
        @Suppress("UNCHECKED_CAST")
        val lr = f["lr"] as List<Double>
        @Suppress("UNCHECKED_CAST")
        val norm = f["grad_norm"] as List<Double>
        val peers = run("fixture", world, directory, steps)
        val heldOut = peers.mapIndexed { rank, (code, lines) ->
            assertEquals(0, code, "rank $rank: ${lines.joinToString("\n")}")
            fun value(kind: String, k: Int) = lines.first { it.startsWith("$kind $k ") }.split(" ")[2].toDouble()
            @Suppress("UNCHECKED_CAST")
            val loss = ranks[rank]["loss"] as List<Double>
            for (k in 0 until steps) {
                assertTrue(abs(value("loss", k) - loss[k]) <= 1e-4 * abs(loss[k]), "rank $rank, step ${k + 1}: loss ${value("loss", k)} vs ${loss[k]}")
                assertTrue(abs(value("lr", k) - lr[k]) <= 1e-12, "rank $rank, step ${k + 1}: lr")
                assertTrue(abs(value("norm", k) - norm[k]) <= 1e-3 * norm[k], "rank $rank, step ${k + 1}: norm")
            }
            lines.first { it.startsWith("held-out ") }.removePrefix("held-out ").split(" ").map { it.toDouble() }
        }
        for (rank in 1 until world) assertEquals(heldOut[0], heldOut[rank], "rank $rank ends with other weights than rank 0")
        @Suppress("UNCHECKED_CAST")
        val want = f["held_out_embeddings_after"] as List<List<Double>>
        if (steps == (f["steps"] as List<*>).size) {
            val h = want[0].size
            for ((i, row) in want.withIndex()) {
                val c = cosine(heldOut[0].subList(i * h, (i + 1) * h), row)
                assertTrue(c >= 0.9999, "held-out text $i: cosine $c to torch DDP's")
            }
        }
        assertEquals(0, directory.toFile().list()!!.size, "the mesh directory is left empty")
    }

    @Test
    fun `30 two processes on one mesh reproduce torch DDP for 20 steps`(@TempDir directory: Path) = reproduces(2, 20, directory)

    // Four ranks for their first 4 steps (the core's own suite runs all 20): what the binding adds is the same.
    @Test
    fun `30 four processes reproduce torch DDP on four ranks`(@TempDir directory: Path) = reproduces(4, 4, directory)

    @Test
    fun `31-32 a mismatched batch, a refused batch, a borrowed mesh and a killed peer fail clearly`(@TempDir directory: Path) {
        val (zero, one) = run("faults", 2, directory, 0)
        assertEquals(137, one.first, "rank 1 was to die: ${one.second.joinToString("\n")}")
        assertEquals(0, zero.first, "rank 0 failed: ${zero.second.joinToString("\n")}")
        val errors = zero.second.filter { it.startsWith("error ") }
        assertEquals(4, errors.size, errors.toString())
        assertTrue(errors[0].startsWith("error invalid_argument ") && "rank 1 has 7 pairs" in errors[0], errors[0])
        assertTrue(errors[1].startsWith("error invalid_argument ") && "refused by rank 1" in errors[1], errors[1])
        assertTrue(errors[2].startsWith("error in_use "), errors[2])
        assertTrue((errors[3].startsWith("error conflict ") || errors[3].startsWith("error timeout ")) && "rank 1 of the mesh is gone" in errors[3], errors[3])
        val seconds = zero.second.first { it.startsWith("failed-after ") }.split(" ")[1].toDouble()
        assertTrue(seconds < 35.0, "the step failed only after $seconds s")
        assertTrue("embedded 8" in zero.second, "the model still embeds")
        // Rank 1's process is gone from this machine: the survivor removes the job directory (the mesh's rules).
        assertEquals(0, directory.toFile().list()!!.size, "the mesh directory is left empty")
    }
}
