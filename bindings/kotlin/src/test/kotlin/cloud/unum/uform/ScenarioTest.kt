// The scenario list (SCENARIOS.md) in Kotlin: each test is numbered after the scenario it covers.
// Runs on a machine without a GPU; the GPU paths are checked for what happens without one.

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/** GPU classes appear in the capability lists too; only CPU classes are valid as `cpuClass`. */
private fun isGpuClass(name: String) =
    name.startsWith("nvidia-") || name.startsWith("amd-cdna") || name.startsWith("amd-rdna")

private fun cpuClasses() = capabilitiesAvailable().split(",").filterNot(::isGpuClass)

class ScenarioTest {
    // ---- Discovery ----

    @Test
    fun `01 capabilities are non-empty comma-separated names without spaces`() {
        for (list in listOf(capabilitiesCompiled(), capabilitiesAvailable())) {
            assertTrue(list.isNotEmpty())
            assertFalse(list.contains(' '), list)
            assertTrue(list.split(",").all { it.isNotEmpty() }, list)
        }
    }

    @Test
    fun `02 every available CPU class is accepted and an unknown one lists the accepted names`() {
        val classes = cpuClasses()
        assertTrue(classes.isNotEmpty())
        for (name in classes) {
            Executor.forRam(ExecutorForRamConfig(cpuClass = name, threads = 1u)).use { it.drain() }
        }
        val error = assertThrows<UFormException.InvalidArgument> {
            Executor.forRam(ExecutorForRamConfig(cpuClass = "intel-pentium-pro"))
        }
        assertTrue(error.message!!.contains("intel-pentium-pro"), error.message)
        assertTrue(error.message!!.contains("cpuClass"), error.message)
        assertTrue(error.message!!.contains(classes.first()), "lists the accepted names: ${error.message}")
    }

    @Test
    fun `03 gpuDevices is an empty list without a GPU driver, well-formed devices with one`() {
        val devices = gpuDevices()
        // Without a GPU device node no driver lists a GPU; UFORM_EXPECT_GPUS=1 or 0 says what to expect instead.
        val expect = System.getenv("UFORM_EXPECT_GPUS")
        val nodes = listOf("/dev/nvidiactl", "/dev/kfd").any { File(it).exists() }
        if (expect == "1") assertTrue(devices.isNotEmpty(), "UFORM_EXPECT_GPUS=1 but gpuDevices() is empty")
        if (expect == "0" || (expect == null && !nodes)) assertEquals(emptyList<GpuDevice>(), devices)
        for (device in devices) assertTrue(device.memoryBytes > 0uL && device.name.isNotEmpty(), device.toString())
    }

    @Test
    fun `04 enum values`() {
        assertEquals(listOf("SWITCH_REDUCED", "PEER_READ"), MultimemTier.values().map { it.name })
        // GpuVendor is numbered 0-3 elsewhere; Kotlin keeps the IDL's order, so ordinals agree.
        assertEquals(listOf(GpuVendor.UNKNOWN, GpuVendor.NVIDIA, GpuVendor.AMD, GpuVendor.APPLE), GpuVendor.values().toList())
        assertEquals(listOf(0, 1, 2, 3), GpuVendor.values().map { it.ordinal })
        assertEquals(listOf(Mood.PARKED, Mood.SPINNING), Mood.values().toList())
    }

    // ---- Executor life cycle ----

    @Test
    fun `05 forRam with no config and with every field set, then drain in every mood`() {
        val executor = Executor.forRam()
        executor.drain()
        executor.drain(Mood.PARKED)
        executor.drain(Mood.SPINNING)
        executor.free()
        val full = ExecutorForRamConfig(memoryDomains = listOf(0u), cpuClass = cpuClasses().first(), threads = 2u, deferredLimit = 16u)
        Executor.forRam(full).use { it.drain(Mood.SPINNING) }
    }

    @Test
    fun `06 free twice is fine and any other call after free is a freed-handle error`() {
        val executor = Executor.forRam()
        executor.free()
        executor.free()
        val error = assertThrows<UFormException.FreedHandle> { executor.drain() }
        assertTrue(error.message!!.contains("drain"), error.message)
        assertThrows<UFormException.FreedHandle> { Mesh.bootstrap(executor) }
        executor.close()
    }

    @Test
    fun `06 repeated create and free, by free() and by use {}, leaves no threads behind`() {
        fun threads() = File("/proc/self/status").readLines().first { it.startsWith("Threads:") }.substringAfter(":").trim().toInt()
        Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { it.drain() } // warm up the library and the runtime
        val before = threads()
        repeat(100) {
            Executor.forRam(ExecutorForRamConfig(threads = 2u)).free()
            Executor.forRam(ExecutorForRamConfig(threads = 2u)).use { it.drain(Mood.SPINNING) }
        }
        assertTrue(threads() <= before + 1, "threads before $before, after ${threads()}")
    }

    @Test
    fun `07 use {} frees the executor`() {
        val executor = Executor.forRam(ExecutorForRamConfig(threads = 1u))
        executor.use { it.drain() }
        // The handle is gone on the Rust side; the Kotlin object refuses further calls.
        assertThrows<IllegalStateException> { executor.drain() }
        executor.close() // closing twice does nothing
    }

    @Test
    fun `08 bad configs are invalid-argument errors naming the argument and value`() {
        val zero = assertThrows<UFormException.InvalidArgument> { Executor.forRam(ExecutorForRamConfig(threads = 0u)) }
        assertTrue(zero.message!!.contains("threads") && zero.message!!.contains("0"), zero.message)
        val limit = assertThrows<UFormException.InvalidArgument> { Executor.forRam(ExecutorForRamConfig(deferredLimit = 0u)) }
        assertTrue(limit.message!!.contains("deferredLimit"), limit.message)
        val node = assertThrows<UFormException.InvalidArgument> { Executor.forRam(ExecutorForRamConfig(memoryDomains = listOf(4096u))) }
        assertTrue(node.message!!.contains("4096"), node.message)
        val cpu = assertThrows<UFormException.InvalidArgument> { Executor.forRam(ExecutorForRamConfig(cpuClass = "arm-cortex-m0")) }
        assertTrue(cpu.message!!.contains("arm-cortex-m0"), cpu.message)
        // Negative and fractional counts cannot be expressed: counts are UInt.
    }

    @Test
    fun `09 onPool is unsupported`() {
        val error = assertThrows<UFormException.Unsupported> { Executor.onPool(0x1000uL) }
        assertTrue(error.message!!.contains("ForkUnion"), error.message)
    }

    @Test
    fun `10 forVram without GPUs is unavailable and its bad arguments are each the documented error`() {
        if (gpuDevices().isEmpty()) {
            val none = assertThrows<UFormException.Unavailable> { Executor.forVram() }
            assertTrue(none.message!!.contains("gpuDevices"), none.message)
        } else {
            Executor.forVram(ExecutorForVramConfig(devices = listOf(0u))).free()
        }
        val streams = assertThrows<UFormException.InvalidArgument> {
            Executor.forVram(ExecutorForVramConfig(devices = listOf(0u, 1u), streams = listOf(0x10uL)))
        }
        assertTrue(streams.message!!.contains("streams"), streams.message)
        val gpuClass = assertThrows<UFormException.InvalidArgument> { Executor.forVram(ExecutorForVramConfig(gpuClass = "nvidia-voodoo")) }
        assertTrue(gpuClass.message!!.contains("nvidia-voodoo"), gpuClass.message)
        val far = assertThrows<UFormException> { Executor.forVram(ExecutorForVramConfig(devices = listOf(7u))) }
        assertTrue(far is UFormException.InvalidArgument || far is UFormException.Unavailable, far.toString())
    }

    // ---- Mesh ----

    @Test
    fun `11 a mesh of one process with a RAM executor`() {
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            val mesh = Mesh.bootstrap(executor)
            val description = mesh.describe()
            assertEquals(0u, description.hostDomainIndex)
            assertEquals(1u, description.hostDomainCount)
            assertEquals(emptyList<GpuDevice>(), description.gpus)
            assertTrue(description.multimemTier in MultimemTier.values())
            mesh.free()
            mesh.free()
            assertThrows<UFormException.FreedHandle> { mesh.describe() }
            mesh.close()
        }
    }

    @Test
    fun `12 peers without directory or job, a bad job name, an index outside the count are invalid`(@TempDir dir: Path) {
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            val noDirectory = assertThrows<UFormException.InvalidArgument> {
                Mesh.bootstrap(executor, MeshOptions(hostDomainCount = 2u, job = "job"))
            }
            assertTrue(noDirectory.message!!.contains("directory"), noDirectory.message)
            val noJob = assertThrows<UFormException.InvalidArgument> {
                Mesh.bootstrap(executor, MeshOptions(hostDomainCount = 2u, directory = dir.toString()))
            }
            assertTrue(noJob.message!!.contains("job"), noJob.message)
            for (bad in listOf("", "a/b", "..", ".")) {
                val error = assertThrows<UFormException.InvalidArgument> {
                    Mesh.bootstrap(executor, MeshOptions(hostDomainCount = 2u, directory = dir.toString(), job = bad))
                }
                assertTrue(error.message!!.contains("job"), error.message)
            }
            val index = assertThrows<UFormException.InvalidArgument> {
                Mesh.bootstrap(executor, MeshOptions(hostDomainIndex = 2u, hostDomainCount = 2u, directory = dir.toString(), job = "index"))
            }
            assertTrue(index.message!!.contains("hostDomainIndex") || index.message!!.contains("host_domain_index"), index.message)
        }
    }

    @Test
    fun `13 a peer that never comes times out after 1 s naming the missing index and leaves nothing behind`(@TempDir dir: Path) {
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            val started = System.nanoTime()
            val error = assertThrows<UFormException.Timeout> {
                Mesh.bootstrap(executor, MeshOptions(hostDomainIndex = 0u, hostDomainCount = 2u, directory = dir.toString(), job = "lonely", timeoutSeconds = 1u))
            }
            val seconds = (System.nanoTime() - started) / 1e9
            assertTrue(seconds >= 0.9, "waited $seconds s")
            assertTrue(error.message!!.contains("1"), error.message)
            assertEquals(emptyList<String>(), dir.toFile().list()!!.toList())
        }
    }

    @Test
    fun `18 a job name planted as a link to another folder is refused as a conflict and nothing is written there`(@TempDir dir: Path) {
        val victim = java.nio.file.Files.createTempDirectory("uform-kotlin-18-victim")
        try {
            File(victim.toFile(), "data.txt").writeText("precious")
            java.nio.file.Files.createSymbolicLink(dir.resolve("job1"), victim)
            Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
                val error = assertThrows<UFormException.Conflict> {
                    Mesh.bootstrap(executor, MeshOptions(hostDomainIndex = 0u, hostDomainCount = 2u, directory = dir.toString(), job = "job1", timeoutSeconds = 5u))
                }
                val message = error.message!!
                assertTrue(message.contains("symbolic link") && message.contains(victim.toString()) && message.contains("nothing was written"), message)
                // The `group` option crosses the binding: a group this host does not know is an invalid argument.
                val group = assertThrows<UFormException.InvalidArgument> {
                    Mesh.bootstrap(executor, MeshOptions(hostDomainCount = 2u, directory = dir.toString(), job = "fresh", group = "uform-no-such-group"))
                }
                assertTrue(group.message!!.contains("group"), group.message)
            }
            assertEquals(listOf("data.txt"), victim.toFile().list()!!.toList())
            assertEquals("precious", File(victim.toFile(), "data.txt").readText())
            assertEquals(listOf("job1"), dir.toFile().list()!!.toList())
            assertTrue(java.nio.file.Files.isSymbolicLink(dir.resolve("job1")))
        } finally {
            victim.toFile().deleteRecursively()
        }
    }

    @Test
    fun `14 four JVM processes meet in one directory, agree, and leave no job directory`(@TempDir dir: Path) {
        val java = File(System.getProperty("java.home"), "bin/java").path
        val classpath = System.getProperty("surefire.test.class.path") ?: System.getProperty("java.class.path")
        val count = 4
        val peers = (0 until count).map { index ->
            ProcessBuilder(java, "-cp", classpath, "cloud.unum.uform.MeshPeer", dir.toString(), "four", index.toString(), count.toString())
                .redirectErrorStream(true)
                .start()
        }
        val lines = peers.mapIndexed { index, peer ->
            assertTrue(peer.waitFor(120, TimeUnit.SECONDS), "peer $index did not finish")
            val output = peer.inputStream.bufferedReader().readText()
            assertEquals(0, peer.exitValue(), "peer $index: $output")
            output.lines().first { it.startsWith("described ") }
        }
        for ((index, line) in lines.withIndex()) {
            assertTrue(line.startsWith("described $index $count "), line)
        }
        // Every peer reports the same shape of the run.
        assertEquals(1, lines.map { it.split(" ").drop(2) }.toSet().size, lines.toString())
        assertFalse(File(dir.toFile(), "four").exists(), "the job directory is gone")
    }

    @Test
    fun `15 use {} frees the mesh, and freeing the executor under a live mesh is refused as in use`() {
        Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
            Mesh.bootstrap(executor).use { mesh ->
                val error = assertThrows<UFormException.InUse> { executor.free() }
                assertTrue(error.message!!.isNotEmpty())
                executor.drain()
                mesh.describe()
            }
            executor.free() // the mesh is gone, so nothing borrows the executor any more
        }
    }

    // ---- Errors and values ----

    @Test
    fun `16 every error carries its kind as an exception class and a message naming argument and value`() {
        val error: UFormException = assertThrows<UFormException.InvalidArgument> {
            Executor.forRam(ExecutorForRamConfig(threads = 0u))
        }
        assertTrue(error is Exception)
        assertTrue(error.message!!.contains("`config.threads`"), error.message)
        // Every shared kind is a subclass, catchable on its own.
        val base = UFormException::class.java
        val kinds = base.declaredClasses.filter { base.isAssignableFrom(it) }.map { it.simpleName }.toSet()
        assertEquals(
            setOf("InvalidArgument", "Unsupported", "Unavailable", "Timeout", "InUse", "Conflict", "OutOfMemory", "Io", "Device", "FreedHandle", "Internal"),
            kinds,
        )
    }

    @Test
    fun `17 records compare and print the Kotlin way`() {
        val a = MeshOptions(job = "run", directory = "/tmp/x")
        val b = MeshOptions(job = "run", directory = "/tmp/x")
        assertEquals(a, b)
        assertEquals(a.hashCode(), b.hashCode())
        assertNotEquals(a, a.copy(job = "other"))
        assertTrue(a.toString().contains("job=run"), a.toString())
        assertEquals(120u, MeshOptions().timeoutSeconds)
        assertEquals(null, ExecutorForRamConfig().threads)
        assertEquals(1024u, ExecutorForRamConfig().deferredLimit)
    }
}
