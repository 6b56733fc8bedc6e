// Uses the installed `cloud.unum:uform` jar the way an application would: the native library comes out of the
// jar, errors are typed exceptions, handles are AutoCloseable.

package example

import cloud.unum.uform.Executor
import cloud.unum.uform.ExecutorForRamConfig
import cloud.unum.uform.Mesh
import cloud.unum.uform.UFormException
import cloud.unum.uform.capabilitiesAvailable
import cloud.unum.uform.gpuDevices

fun main() {
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
    println("consumer ok")
}
