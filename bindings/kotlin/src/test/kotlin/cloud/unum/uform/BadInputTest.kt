// Bad input (issue 9, scenarios 6, 8, 10, 12, 16): every public function, constructor and method with every kind of
// bad value Kotlin lets a caller pass. The table says what each call must do: throw one documented exception, or
// accept the value. Nothing may crash the JVM, hang, or throw anything else.
//
// What Kotlin lets through: `null` wherever a type is nullable (absent), 0 and MAX_VALUE for the unsigned counts
// (UInt, ULong: no negative values exist), empty lists and repeated entries, strings that are empty, contain NUL,
// or hold a lone UTF-16 surrogate, paths that do not exist or name a file, and handles that were freed (`free()`:
// later calls throw `UFormException.FreedHandle`) or closed (`close()` / `use {}`: the object drops its reference, and
// later calls throw `IllegalStateException` before reaching Rust). A lone surrogate cannot become UTF-8, so the JNI
// glue throws `java.nio.charset.MalformedInputException` (a `CharacterCodingException`) before the core sees it.
//
// A closed object passed as an argument (a closed Executor to Mesh.bootstrap) is the same IllegalStateException: an
// argument's handle is taken for the call exactly as a receiver's is.

package cloud.unum.uform

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.io.TempDir
import java.io.File
import java.nio.charset.CharacterCodingException
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit
import kotlin.reflect.KClass

/** What a call must do: throw [kind] with a message containing every string in [mentions], or (kind null) return. */
internal class Expect(val kind: KClass<out Throwable>?, vararg val mentions: String) {
    override fun toString() = kind?.qualifiedName?.removePrefix("cloud.unum.uform.") ?: "accepts"
}

private val ACCEPTS = Expect(null)
private fun invalid(vararg mentions: String) = Expect(UFormException.InvalidArgument::class, *mentions)
private fun freed(method: String) = Expect(UFormException.FreedHandle::class, method)
private val CLOSED = Expect(IllegalStateException::class, "was closed")
private val NOT_UTF8 = Expect(CharacterCodingException::class)
private val UNAVAILABLE = Expect(UFormException.Unavailable::class, "gpuDevices")
private val UNSUPPORTED = Expect(UFormException.Unsupported::class)
private fun io(vararg mentions: String) = Expect(UFormException.Io::class, *mentions)

/** One row of the table. [call] may return a handle, which the runner closes. */
internal class Case(val name: String, val expect: Expect, val call: () -> Any?)

/** The table. [dir] is an empty directory the mesh rows may use; [file] is a regular file in it. */
internal object BadInputCases {
    private const val LONE_SURROGATE = "\uD800"
    private const val WITH_NUL = "a\u0000b"

    private fun ram() = Executor.forRam(ExecutorForRamConfig(threads = 1u))
    private fun freedExecutor() = ram().also { it.free() }
    private fun closedExecutor() = ram().also { it.close() }
    private fun mesh() = Mesh.bootstrap(ram())
    private fun freedMesh() = mesh().also { it.free() }
    private fun closedMesh() = mesh().also { it.close() }

    /** Bootstraps a mesh on a fresh one-thread executor and frees both, whatever happens. */
    private fun bootstrap(options: MeshOptions?): Any? = ram().use { executor -> Mesh.bootstrap(executor, options).use { it.describe() } }

    /** Options for two peers meeting in [dir] (nobody else comes, so valid ones would time out after 1 s). */
    private fun peers(dir: String?, job: String?, index: UInt? = 0u) =
        MeshOptions(hostDomainIndex = index, hostDomainCount = 2u, directory = dir, job = job, timeoutSeconds = 1u)

    fun all(dir: String, file: String): List<Case> = buildList {
        // ---- Executor.forRam: every field of the config ----
        add(Case("forRam(null)", ACCEPTS) { Executor.forRam(null) })
        add(Case("forRam(all fields null)", ACCEPTS) { Executor.forRam(ExecutorForRamConfig(null, null, null, null)) })
        add(Case("forRam threads=0", invalid("threads", "0")) { Executor.forRam(ExecutorForRamConfig(threads = 0u)) })
        add(Case("forRam threads=UInt.MAX_VALUE", invalid("threads", "4294967295")) { Executor.forRam(ExecutorForRamConfig(threads = UInt.MAX_VALUE)) })
        add(Case("forRam threads=65537", invalid("threads", "65537")) { Executor.forRam(ExecutorForRamConfig(threads = 65_537u)) })
        add(Case("forRam deferredLimit=0", invalid("deferredLimit", "0")) { Executor.forRam(ExecutorForRamConfig(threads = 1u, deferredLimit = 0u)) })
        add(Case("forRam deferredLimit=UInt.MAX_VALUE", ACCEPTS) { Executor.forRam(ExecutorForRamConfig(threads = 1u, deferredLimit = UInt.MAX_VALUE)) })
        add(Case("forRam memoryDomains=[]", invalid("memoryDomains", "empty")) { Executor.forRam(ExecutorForRamConfig(memoryDomains = emptyList())) })
        add(Case("forRam memoryDomains=[UInt.MAX_VALUE]", invalid("memoryDomains", "4294967295")) {
            Executor.forRam(ExecutorForRamConfig(memoryDomains = listOf(UInt.MAX_VALUE)))
        })
        add(Case("forRam memoryDomains=[0, 0]", invalid("memoryDomains", "twice")) { Executor.forRam(ExecutorForRamConfig(memoryDomains = listOf(0u, 0u))) })
        add(Case("forRam memoryDomains=100000 x [0]", invalid("memoryDomains", "twice")) {
            Executor.forRam(ExecutorForRamConfig(memoryDomains = List(100_000) { 0u }))
        })
        add(Case("forRam cpuClass=\"\"", invalid("cpuClass")) { Executor.forRam(ExecutorForRamConfig(cpuClass = "")) })
        add(Case("forRam cpuClass with NUL", invalid("cpuClass")) { Executor.forRam(ExecutorForRamConfig(cpuClass = WITH_NUL)) })
        add(Case("forRam cpuClass lone surrogate", NOT_UTF8) { Executor.forRam(ExecutorForRamConfig(cpuClass = LONE_SURROGATE)) })
        add(Case("forRam cpuClass upper case", invalid("`config.cpuClass`", "PORTABLE")) { Executor.forRam(ExecutorForRamConfig(cpuClass = "PORTABLE")) })
        add(Case("forRam cpuClass with a space", invalid("cpuClass")) { Executor.forRam(ExecutorForRamConfig(cpuClass = " portable")) })
        add(Case("forRam cpuClass is a GPU class", invalid("`config.cpuClass`", "nvidia-hopper")) { Executor.forRam(ExecutorForRamConfig(cpuClass = "nvidia-hopper")) })
        add(Case("forRam cpuClass of another architecture", Expect(UFormException.Unsupported::class, "cpuClass", "arm-neon")) {
            Executor.forRam(ExecutorForRamConfig(cpuClass = "arm-neon"))
        })

        // ---- Executor.forVram: shape checks come before the GPU check, so they answer without a GPU ----
        add(Case("forVram(null)", UNAVAILABLE) { Executor.forVram(null) })
        add(Case("forVram(all fields null)", UNAVAILABLE) { Executor.forVram(ExecutorForVramConfig(null, null, null, null, null, null, null)) })
        add(Case("forVram deferredLimit=0", invalid("deferredLimit")) { Executor.forVram(ExecutorForVramConfig(deferredLimit = 0u)) })
        add(Case("forVram deferredLimit=UInt.MAX_VALUE", UNAVAILABLE) { Executor.forVram(ExecutorForVramConfig(deferredLimit = UInt.MAX_VALUE)) })
        add(Case("forVram scratchLimit=0", invalid("scratchLimit")) { Executor.forVram(ExecutorForVramConfig(scratchLimit = 0uL)) })
        add(Case("forVram scratchLimit=ULong.MAX_VALUE", UNAVAILABLE) { Executor.forVram(ExecutorForVramConfig(scratchLimit = ULong.MAX_VALUE)) })
        add(Case("forVram devices=[]", invalid("devices", "empty")) { Executor.forVram(ExecutorForVramConfig(devices = emptyList())) })
        add(Case("forVram devices=[0, 0]", invalid("devices", "twice")) { Executor.forVram(ExecutorForVramConfig(devices = listOf(0u, 0u))) })
        add(Case("forVram devices=[UInt.MAX_VALUE]", UNAVAILABLE) { Executor.forVram(ExecutorForVramConfig(devices = listOf(UInt.MAX_VALUE))) })
        add(Case("forVram streams=[] for one device", invalid("streams")) { Executor.forVram(ExecutorForVramConfig(streams = emptyList())) })
        add(Case("forVram streams=2 for absent devices", invalid("streams")) { Executor.forVram(ExecutorForVramConfig(streams = listOf(1uL, 2uL))) })
        add(Case("forVram streams=[0] (the null stream), refused before the device list is read", invalid("config.streams", "NULL stream")) { Executor.forVram(ExecutorForVramConfig(devices = listOf(0u), streams = listOf(0uL))) })
        add(Case("forVram streams=[ULong.MAX_VALUE]", UNAVAILABLE) { Executor.forVram(ExecutorForVramConfig(devices = listOf(0u), streams = listOf(ULong.MAX_VALUE))) })
        add(Case("forVram gpuClass=\"\"", invalid("gpuClass")) { Executor.forVram(ExecutorForVramConfig(gpuClass = "")) })
        add(Case("forVram gpuClass with NUL", invalid("gpuClass")) { Executor.forVram(ExecutorForVramConfig(gpuClass = WITH_NUL)) })
        add(Case("forVram gpuClass lone surrogate", NOT_UTF8) { Executor.forVram(ExecutorForVramConfig(gpuClass = LONE_SURROGATE)) })
        add(Case("forVram gpuClass is a CPU class", invalid("gpuClass", "portable")) { Executor.forVram(ExecutorForVramConfig(gpuClass = "portable")) })
        add(Case("forVram memoryDomains=[]", invalid("memoryDomains")) { Executor.forVram(ExecutorForVramConfig(memoryDomains = emptyList())) })
        add(Case("forVram memoryDomains=[UInt.MAX_VALUE]", invalid("memoryDomains")) { Executor.forVram(ExecutorForVramConfig(memoryDomains = listOf(UInt.MAX_VALUE))) })
        add(Case("forVram cpuClass with NUL", invalid("cpuClass")) { Executor.forVram(ExecutorForVramConfig(cpuClass = WITH_NUL)) })
        add(Case("forVram cpuClass lone surrogate", NOT_UTF8) { Executor.forVram(ExecutorForVramConfig(cpuClass = LONE_SURROGATE)) })

        // ---- Executor.onPool: the config is checked, then the call is unsupported ----
        add(Case("onPool(0)", UNSUPPORTED) { Executor.onPool(0uL) })
        add(Case("onPool(ULong.MAX_VALUE)", UNSUPPORTED) { Executor.onPool(ULong.MAX_VALUE) })
        add(Case("onPool config null", UNSUPPORTED) { Executor.onPool(0x1000uL, null) })
        add(Case("onPool all fields null", UNSUPPORTED) { Executor.onPool(0x1000uL, ExecutorOnPoolConfig(null, null, null)) })
        add(Case("onPool deferredLimit=0", invalid("deferredLimit")) { Executor.onPool(0x1000uL, ExecutorOnPoolConfig(deferredLimit = 0u)) })
        add(Case("onPool memoryDomains=[]", invalid("memoryDomains")) { Executor.onPool(0x1000uL, ExecutorOnPoolConfig(memoryDomains = emptyList())) })
        add(Case("onPool memoryDomains=[UInt.MAX_VALUE]", invalid("memoryDomains")) { Executor.onPool(0x1000uL, ExecutorOnPoolConfig(memoryDomains = listOf(UInt.MAX_VALUE))) })
        add(Case("onPool cpuClass=\"\"", invalid("cpuClass")) { Executor.onPool(0x1000uL, ExecutorOnPoolConfig(cpuClass = "")) })
        add(Case("onPool cpuClass with NUL", invalid("cpuClass")) { Executor.onPool(0x1000uL, ExecutorOnPoolConfig(cpuClass = WITH_NUL)) })
        add(Case("onPool cpuClass lone surrogate", NOT_UTF8) { Executor.onPool(0x1000uL, ExecutorOnPoolConfig(cpuClass = LONE_SURROGATE)) })

        // ---- Executor methods on freed and closed handles ----
        for (mood in Mood.values()) {
            add(Case("drain($mood) after free()", freed("drain")) { freedExecutor().drain(mood) })
            add(Case("drain($mood) after close()", CLOSED) { closedExecutor().drain(mood) })
        }
        add(Case("free() after free()", ACCEPTS) { freedExecutor().free() })
        add(Case("free() after close()", CLOSED) { closedExecutor().free() })
        add(Case("close() after close()", ACCEPTS) { closedExecutor().close() })
        add(Case("close() after free()", ACCEPTS) { freedExecutor().close() })
        add(Case("free() under a live mesh", Expect(UFormException.InUse::class)) {
            ram().use { executor -> Mesh.bootstrap(executor).use { executor.free() } }
        })

        // ---- Mesh.bootstrap: the executor ----
        add(Case("bootstrap(freed executor)", freed("bootstrap")) { Mesh.bootstrap(freedExecutor()) })
        add(Case("bootstrap(closed executor)", CLOSED) { Mesh.bootstrap(closedExecutor()) })

        // ---- Mesh.bootstrap: every field of the options ----
        add(Case("bootstrap options null", ACCEPTS) { bootstrap(null) })
        add(Case("bootstrap all fields null", ACCEPTS) { bootstrap(MeshOptions(null, null, null, null, null, null)) })
        add(Case("bootstrap hostDomainCount=0", invalid("hostDomainCount", "0")) { bootstrap(MeshOptions(hostDomainCount = 0u)) })
        add(Case("bootstrap timeoutSeconds=0", invalid("timeoutSeconds", "0")) { bootstrap(MeshOptions(timeoutSeconds = 0u)) })
        add(Case("bootstrap gpusPerMultimemDomain=0", invalid("gpusPerMultimemDomain", "0")) { bootstrap(MeshOptions(gpusPerMultimemDomain = 0u)) })
        add(Case("bootstrap gpusPerMultimemDomain=UInt.MAX_VALUE", ACCEPTS) { bootstrap(MeshOptions(gpusPerMultimemDomain = UInt.MAX_VALUE)) })
        add(Case("bootstrap hostDomainIndex=1 of 1", invalid("hostDomainIndex", "1")) { bootstrap(MeshOptions(hostDomainIndex = 1u)) })
        add(Case("bootstrap hostDomainIndex=UInt.MAX_VALUE, count absent", invalid("hostDomainIndex", "4294967295")) {
            bootstrap(MeshOptions(hostDomainIndex = UInt.MAX_VALUE, hostDomainCount = null))
        })
        add(Case("bootstrap hostDomainIndex=2 of 2", invalid("hostDomainIndex")) { bootstrap(peers(dir, "index", index = 2u)) })
        add(Case("bootstrap hostDomainCount=UInt.MAX_VALUE, no directory", invalid("directory")) {
            bootstrap(MeshOptions(hostDomainCount = UInt.MAX_VALUE, job = "j"))
        })
        add(Case("bootstrap hostDomainCount=UInt.MAX_VALUE, nobody comes", Expect(UFormException.Timeout::class, "1-4294967294")) {
            bootstrap(MeshOptions(hostDomainIndex = 0u, hostDomainCount = UInt.MAX_VALUE, directory = dir, job = "max", timeoutSeconds = 1u))
        })
        add(Case("bootstrap peers, directory null", invalid("directory")) { bootstrap(peers(null, "j")) })
        add(Case("bootstrap peers, directory=\"\"", invalid("directory", "empty")) { bootstrap(peers("", "j")) })
        add(Case("bootstrap peers, directory with NUL", invalid("directory", "NUL")) { bootstrap(peers("$dir/$WITH_NUL", "j")) })
        add(Case("bootstrap peers, directory lone surrogate", NOT_UTF8) { bootstrap(peers("$dir/$LONE_SURROGATE", "j")) })
        add(Case("bootstrap peers, directory does not exist", io("$dir/missing")) { bootstrap(peers("$dir/missing/deeper", "j")) })
        add(Case("bootstrap peers, directory is a file", io(file)) { bootstrap(peers(file, "j")) })
        add(Case("bootstrap peers, job null", invalid("job")) { bootstrap(peers(dir, null)) })
        for (job in listOf("", ".", "..", "a/b", "a\\b", "/", WITH_NUL)) {
            add(Case("bootstrap peers, job=${job.replace("\u0000", "\\0").ifEmpty { "\"\"" }}", invalid("job")) { bootstrap(peers(dir, job)) })
        }
        add(Case("bootstrap peers, job lone surrogate", NOT_UTF8) { bootstrap(peers(dir, LONE_SURROGATE)) })
        add(Case("bootstrap peers, job longer than a file name", io("job directory")) { bootstrap(peers(dir, "j".repeat(300))) })
        add(Case("bootstrap peers, timeoutSeconds=UInt.MAX_VALUE, directory missing", io("missing")) {
            bootstrap(MeshOptions(hostDomainCount = 2u, directory = "$dir/missing", job = "j", timeoutSeconds = UInt.MAX_VALUE))
        })

        // ---- Mesh methods on freed and closed handles ----
        add(Case("describe() after free()", freed("describe")) { freedMesh().describe() })
        add(Case("describe() after close()", CLOSED) { closedMesh().describe() })
        add(Case("mesh free() after free()", ACCEPTS) { freedMesh().free() })
        add(Case("mesh free() after close()", CLOSED) { closedMesh().free() })
        add(Case("mesh close() after close()", ACCEPTS) { closedMesh().close() })
        add(Case("mesh close() after free()", ACCEPTS) { freedMesh().close() })

        addAll(trainerCases(dir, file))
    }

    // ---- Trainer: the first Double inputs (NaN, the infinities, negatives) and its model borrow ----

    private val modelDir: String
        get() = System.getenv("UFORM_TEST_MODEL_DIR") ?: error("UFORM_TEST_MODEL_DIR is not set: run the suite through `cargo xtask test kotlin`")

    /** Runs [body] on a fresh trainer over a fresh model (one-thread executor); frees all three, whatever happens. */
    private fun <T> trained(config: TrainerContrastiveConfig? = null, body: (Trainer, Model) -> T): T =
        ram().use { executor ->
            Model.loadRam(modelDir, ModelLoadRamConfig(executor)).use { model ->
                Trainer.contrastive(model, config).use { trainer -> body(trainer, model) }
            }
        }

    private fun contrastive(config: TrainerContrastiveConfig?): Any? = trained(config) { _, _ -> null }

    private fun trainerCases(dir: String, file: String): List<Case> = buildList {
        val doubles = listOf(
            "NaN" to Double.NaN,
            "-NaN" to -Double.NaN,
            "+Infinity" to Double.POSITIVE_INFINITY,
            "-Infinity" to Double.NEGATIVE_INFINITY,
            "-1" to -1.0,
            "-MIN_VALUE" to -Double.MIN_VALUE,
            "-MAX_VALUE" to -Double.MAX_VALUE,
        )
        val fields: List<Pair<String, (Double) -> TrainerContrastiveConfig>> = listOf(
            "learningRate" to { v -> TrainerContrastiveConfig(learningRate = v) },
            "weightDecay" to { v -> TrainerContrastiveConfig(weightDecay = v) },
            "maxGradNorm" to { v -> TrainerContrastiveConfig(maxGradNorm = v) },
            "scale" to { v -> TrainerContrastiveConfig(scale = v) },
            "dropout" to { v -> TrainerContrastiveConfig(dropout = v) },
        )
        for ((field, make) in fields) {
            for ((label, value) in doubles) {
                add(Case("contrastive $field=$label", invalid("`config.$field`")) { contrastive(make(value)) })
            }
        }
        add(Case("contrastive scale=0", invalid("`config.scale`")) { contrastive(TrainerContrastiveConfig(scale = 0.0)) })
        add(Case("contrastive scale=-0.0", invalid("`config.scale`")) { contrastive(TrainerContrastiveConfig(scale = -0.0)) })
        add(Case("contrastive dropout=1", invalid("`config.dropout`")) { contrastive(TrainerContrastiveConfig(dropout = 1.0)) })
        add(Case("contrastive dropout=MAX_VALUE", invalid("`config.dropout`")) { contrastive(TrainerContrastiveConfig(dropout = Double.MAX_VALUE)) })
        add(Case("contrastive maxTokens=0", invalid("`config.maxTokens`")) { contrastive(TrainerContrastiveConfig(maxTokens = 0u)) })
        add(Case("contrastive maxTokens=513", invalid("`config.maxTokens`", "513")) { contrastive(TrainerContrastiveConfig(maxTokens = 513u)) })
        add(Case("contrastive maxTokens=UInt.MAX_VALUE", invalid("`config.maxTokens`", "4294967295")) { contrastive(TrainerContrastiveConfig(maxTokens = UInt.MAX_VALUE)) })
        add(Case("contrastive(null)", ACCEPTS) { contrastive(null) })
        add(Case("contrastive all fields null", ACCEPTS) { contrastive(TrainerContrastiveConfig(null, null, null, null, null, null, null, null, null)) })
        add(Case("contrastive zeros where zero means off", ACCEPTS) {
            contrastive(TrainerContrastiveConfig(learningRate = 0.0, weightDecay = 0.0, maxGradNorm = 0.0, dropout = 0.0))
        })
        add(Case("contrastive counts at their maximum, maxTokens=512", ACCEPTS) {
            contrastive(TrainerContrastiveConfig(warmupSteps = UInt.MAX_VALUE, totalSteps = UInt.MAX_VALUE, seed = ULong.MAX_VALUE, maxTokens = 512u))
        })
        add(Case("contrastive learningRate=MAX_VALUE, scale=MIN_VALUE", ACCEPTS) {
            contrastive(TrainerContrastiveConfig(learningRate = Double.MAX_VALUE, scale = Double.MIN_VALUE))
        })
        add(Case("contrastive(freed model)", freed("contrastive")) {
            ram().use { executor -> Trainer.contrastive(Model.loadRam(modelDir, ModelLoadRamConfig(executor)).also { it.free() }) }
        })
        add(Case("contrastive(closed model)", CLOSED) {
            ram().use { executor -> Trainer.contrastive(Model.loadRam(modelDir, ModelLoadRamConfig(executor)).also { it.close() }) }
        })
        add(Case("model free() under a live trainer", Expect(UFormException.InUse::class, "1 trainer borrows it")) {
            trained { _, model -> model.free() }
        })

        // ---- Trainer.step ----
        val ok = listOf("an anchor", "another anchor")
        val pos = listOf("a positive", "another positive")
        add(Case("step positives one short", invalid("`positives`")) { trained { t, _ -> t.step(ok, pos.take(1)) } })
        add(Case("step positives one too many", invalid("`positives`")) { trained { t, _ -> t.step(ok.take(1), pos) } })
        add(Case("step empty batch", invalid("`anchors`")) { trained { t, _ -> t.step(emptyList(), emptyList()) } })
        for ((label, text) in listOf("NUL" to WITH_NUL, "trailing NUL" to "text\u0000")) {
            add(Case("step anchors[1] with $label", invalid("`anchors[1]`")) { trained { t, _ -> t.step(listOf("ok", text), pos) } })
            add(Case("step positives[1] with $label", invalid("`positives[1]`")) { trained { t, _ -> t.step(ok, listOf("ok", text)) } })
        }
        add(Case("step anchors lone surrogate", NOT_UTF8) { trained { t, _ -> t.step(listOf(LONE_SURROGATE), listOf("p")) } })
        add(Case("step positives lone surrogate", NOT_UTF8) { trained { t, _ -> t.step(listOf("a"), listOf(LONE_SURROGATE)) } })

        // ---- Trainer.save ----
        add(Case("save onto an existing directory", invalid("`directory`", "already exists")) { trained { t, _ -> t.save(dir) } })
        add(Case("save onto an existing file", invalid("`directory`", "already exists")) { trained { t, _ -> t.save(file) } })
        add(Case("save under a missing parent", io("$dir/missing/trained")) { trained { t, _ -> t.save("$dir/missing/trained") } })
        add(Case("save under a file", io("$file/trained")) { trained { t, _ -> t.save("$file/trained") } })
        add(Case("save lone surrogate", NOT_UTF8) { trained { t, _ -> t.save("$dir/$LONE_SURROGATE") } })

        // ---- freed and closed trainers ----
        add(Case("step after free()", freed("step")) { trained { t, _ -> t.free(); t.step(ok, pos) } })
        add(Case("step after close()", CLOSED) { trained { t, _ -> t.close(); t.step(ok, pos) } })
        add(Case("save after free()", freed("save")) { trained { t, _ -> t.free(); t.save("$dir/never") } })
        add(Case("save after close()", CLOSED) { trained { t, _ -> t.close(); t.save("$dir/never") } })
        add(Case("trainer free() after free()", ACCEPTS) { trained { t, _ -> t.free(); t.free() } })
        add(Case("trainer free() after close()", CLOSED) { trained { t, _ -> t.close(); t.free() } })
        add(Case("trainer close() after free()", ACCEPTS) { trained { t, _ -> t.free(); t.close() } })
    }
}

/** Runs [case]; null when it did what the table says, else what went wrong. */
private fun outcome(case: Case): String? {
    val thrown = try {
        (case.call() as? AutoCloseable)?.close()
        null
    } catch (t: Throwable) {
        t
    }
    val kind = case.expect.kind
    return when {
        kind == null && thrown == null -> null
        kind == null -> "expected it to be accepted, got $thrown"
        thrown == null -> "expected ${case.expect}, but it returned"
        !kind.isInstance(thrown) -> "expected ${case.expect}, got $thrown"
        else -> case.expect.mentions.firstOrNull { !thrown.message.orEmpty().contains(it) }?.let { "the message does not mention `$it`: ${thrown.message}" }
    }
}

/** A child JVM on the test class path, running in [dir] (where a crash report would go), its output into [dir]/[name].out. */
private fun javaChild(dir: Path, name: String, vararg args: String, env: Map<String, String?> = emptyMap()): Pair<Process, File> {
    val java = File(System.getProperty("java.home"), "bin/java").path
    val classpath = System.getProperty("surefire.test.class.path") ?: System.getProperty("java.class.path")
    val out = dir.resolve("$name.out").toFile()
    val builder = ProcessBuilder(java, "-XX:ErrorFile=$dir/hs_err_%p.log", "-cp", classpath, *args)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(out)
    for ((variable, value) in env) if (value == null) builder.environment().remove(variable) else builder.environment()[variable] = value
    return builder.start() to out
}

/** Prints `meshOptionsFromEnvironment()` or the class and message of what it threw. */
object MeshOptionsFromEnvironmentChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val line = try {
            "returned ${meshOptionsFromEnvironment()}"
        } catch (t: Throwable) {
            "threw ${t.javaClass.name}: ${t.message}"
        }
        println(line)
        System.out.flush()
        kotlin.system.exitProcess(0)
    }
}

class BadInputTest {
    @Test
    fun `every public call with every bad value throws the documented exception or accepts it`(@TempDir dir: Path) {
        val file = Files.writeString(dir.resolve("a-file"), "not a directory").toString()
        val cases = BadInputCases.all(dir.toString(), file)
        assertEquals(cases.size, cases.map { it.name }.toSet().size, "case names are unique")
        val failures = mutableListOf<String>()
        var run = 0
        for (case in cases) {
            outcome(case)?.let { failures += "${case.name}: $it" }
            run++
        }
        println("bad input: $run cases run (${cases.count { it.expect.kind != null }} throw, ${cases.count { it.expect.kind == null }} accept)")
        assertTrue(failures.isEmpty(), failures.joinToString("\n", "${failures.size} of $run cases failed:\n"))
        // Nothing the table made is left behind in the meeting directory.
        assertEquals(listOf("a-file"), dir.toFile().list()!!.toList())
    }

    @Test
    fun `meshOptionsFromEnvironment with bad launcher variables is invalid argument naming the variable`(@TempDir dir: Path) {
        val launcherVariables = listOf("RANK", "WORLD_SIZE", "TORCHELASTIC_RUN_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID", "SLURM_STEP_ID")
        val table: List<Pair<Map<String, String>, String>> = listOf(
            mapOf<String, String>() to "returned null",
            mapOf("RANK" to "-1", "WORLD_SIZE" to "2") to "InvalidArgument: `RANK`",
            mapOf("RANK" to "0", "WORLD_SIZE" to "two") to "InvalidArgument: `WORLD_SIZE`",
            mapOf("RANK" to "", "WORLD_SIZE" to "") to "InvalidArgument: `RANK`",
            mapOf("RANK" to "4294967296", "WORLD_SIZE" to "2") to "InvalidArgument: `RANK`",
            mapOf("RANK" to "0") to "InvalidArgument: `WORLD_SIZE`",
            mapOf("SLURM_NTASKS" to "2") to "InvalidArgument: `SLURM_PROCID`",
            mapOf("SLURM_PROCID" to "1.5", "SLURM_NTASKS" to "2") to "InvalidArgument: `SLURM_PROCID`",
            mapOf("RANK" to "1", "WORLD_SIZE" to "2", "TORCHELASTIC_RUN_ID" to "a/b\\c") to "returned MeshOptions(hostDomainIndex=1, hostDomainCount=2",
        )
        // One JVM per environment, all started at once.
        val children = table.mapIndexed { index, (env, _) ->
            javaChild(dir, "env-$index", "cloud.unum.uform.MeshOptionsFromEnvironmentChild", env = launcherVariables.associateWith { env[it] })
        }
        val failures = table.zip(children).mapNotNull { (row, started) ->
            val (child, out) = started
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child for ${row.first} did not finish")
            val output = out.readText().trim()
            if (child.exitValue() == 0 && output.contains(row.second)) null else "${row.first}: expected `${row.second}`, got exit ${child.exitValue()}: $output"
        }
        println("bad input: ${table.size} meshOptionsFromEnvironment environments")
        assertTrue(failures.isEmpty(), failures.joinToString("\n"))
        // The job is sanitized: the run id's separators become `_`.
        assertTrue(table.last().first.isNotEmpty())
    }
}
