// What the Kotlin suites and their peer programs share besides the JSON reader (TestJson.kt): the environment the
// suites need, and joining a mesh as one of its peers.

package cloud.unum.uform

import org.junit.jupiter.api.fail

/** The environment variable `name`; fails the test when it is not set (`cargo xtask test kotlin` sets it). */
internal fun required(name: String): String =
    System.getenv(name) ?: fail("$name is not set: run the suite through `cargo xtask test kotlin`, which installs the test model")

/** `Mesh.bootstrap` as peer `index` of `count` meeting in `directory` as `job`, waiting at most `timeoutSeconds`. */
internal fun joinMesh(executor: Executor, directory: String, job: String, index: UInt, count: UInt, timeoutSeconds: UInt): Mesh =
    Mesh.bootstrap(
        executor,
        MeshOptions(
            hostDomainIndex = index,
            hostDomainCount = count,
            directory = directory,
            job = job,
            timeoutSeconds = timeoutSeconds,
        ),
    )
