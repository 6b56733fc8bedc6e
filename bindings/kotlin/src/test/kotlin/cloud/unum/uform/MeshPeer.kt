// One peer of the multi-process mesh test (scenario 14): joins the mesh, prints what `describe()` reports as one
// line, frees everything and exits 0; any failure prints the exception and exits 1.

package cloud.unum.uform

import kotlin.system.exitProcess

object MeshPeer {
    @JvmStatic
    fun main(args: Array<String>) {
        val (directory, job, index, count) = args
        try {
            Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
                joinMesh(executor, directory, job, index.toUInt(), count.toUInt(), timeoutSeconds = 60u).use { mesh ->
                    val d = mesh.describe()
                    println("described ${d.hostDomainIndex} ${d.hostDomainCount} ${d.multimemDomainCount} ${d.gpusPerMultimemDomain} ${d.multimemTier}")
                    mesh.free()
                }
                executor.free()
            }
        } catch (e: Exception) {
            println("peer $index failed: $e")
            exitProcess(1)
        }
        exitProcess(0)
    }
}
