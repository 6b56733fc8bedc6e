// One rank of the trainer-across-the-mesh tests (scenarios 30–32), started by TrainMeshTest:
//   TrainMeshPeer ROLE FIXTURE DIRECTORY RANK WORLD STEPS
// `fixture` trains STEPS steps of FIXTURE (a ddp*.json) on this rank's share and prints `loss K VALUE`, `lr K VALUE`,
// `norm K VALUE` lines and a `held-out` line of the held-out embeddings after training. `faults` steps with a batch
// one pair short on rank 1, with a batch rank 1 refuses, frees the mesh under the trainer, takes one good step, and
// then rank 1 dies at once (halt) while rank 0 steps again; rank 0 prints each error as `error CODE MESSAGE`.
// Exits 0 when it got that far.

package cloud.unum.uform

import kotlin.system.exitProcess

object TrainMeshPeer {
    @JvmStatic
    fun main(args: Array<String>) {
        val (role, fixture, directory, rankText, worldText) = args
        val stepsText = args[5]
        val rank = rankText.toInt()
        val f = readJsonObject(fixture)
        @Suppress("UNCHECKED_CAST")
        val c = f["config"] as Map<String, Any?>
        @Suppress("UNCHECKED_CAST")
        val pairs = f["pairs"] as List<List<String>>
        @Suppress("UNCHECKED_CAST")
        val local = ((f["ranks"] as List<Map<String, Any?>>)[rank]["local_steps"] as List<List<Double>>)
        fun batch(k: Int): Pair<List<String>, List<String>> {
            val mine = local[k].map { pairs[it.toInt()] }
            return mine.map { it[0] } to mine.map { it[1] }
        }
        fun fails(call: () -> Unit) {
            try {
                call()
                println("error none -")
            } catch (e: UFormException) {
                println("error ${e.code} ${e.message}")
            }
        }
        try {
            Executor.forRam(ExecutorForRamConfig(threads = 1u)).use { executor ->
                joinMesh(executor, directory, "train", rank.toUInt(), worldText.toUInt(), timeoutSeconds = 30u).use { mesh ->
                    Model.loadRam(System.getenv("UFORM_TEST_MODEL_DIR"), ModelLoadRamConfig(executor)).use { model ->
                        val config = TrainerContrastiveConfig(
                            learningRate = c["learning_rate"] as Double,
                            weightDecay = c["weight_decay"] as Double,
                            warmupSteps = (c["warmup_steps"] as Double).toUInt(),
                            totalSteps = (c["max_steps"] as Double).toUInt(),
                            maxGradNorm = c["max_grad_norm"] as Double,
                            scale = c["scale"] as Double,
                            dropout = 0.0,
                            seed = (c["seed"] as Double).toULong(),
                            mesh = mesh,
                        )
                        Trainer.contrastive(model, config).use { trainer ->
                            if (role == "fixture") {
                                for (k in 0 until stepsText.toInt()) {
                                    val (anchors, positives) = batch(k)
                                    val step = trainer.step(anchors, positives)
                                    println("loss $k ${step.loss}")
                                    println("lr $k ${step.learningRate}")
                                    println("norm $k ${step.gradientNorm}")
                                }
                                @Suppress("UNCHECKED_CAST")
                                val heldOut = model.encodeText(f["held_out"] as List<String>)
                                println("held-out " + heldOut.data.joinToString(" "))
                            } else {
                                val (anchors, positives) = batch(0)
                                val n = if (rank == 1) anchors.size - 1 else anchors.size
                                fails { trainer.step(anchors.take(n), positives.take(n)) }
                                fails { trainer.step(anchors, if (rank == 1) positives.drop(1) else positives) }
                                fails { mesh.free() }
                                trainer.step(anchors, positives)
                                if (rank == 1) Runtime.getRuntime().halt(137)
                                val started = System.nanoTime()
                                fails { trainer.step(anchors, positives) }
                                println("failed-after ${(System.nanoTime() - started) / 1e9}")
                                println("embedded ${model.encodeText(anchors).rows}")
                            }
                        }
                    }
                }
            }
        } catch (e: Exception) {
            println("rank $rank failed: $e")
            exitProcess(1)
        }
        exitProcess(0)
    }
}
