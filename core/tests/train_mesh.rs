//! The trainer across processes against torch's DistributedDataParallel (`tests/fixtures/train/ddp2.json` and
//! `ddp4.json`, made by `scripts/make-train-ddp-fixture.py`): 2 and 4 real processes of this test binary meet on one
//! mesh, each steps on its share of every batch of 16, and each step's loss on each rank matches that rank's loss
//! under torch within 1e-4 relative, the learning rate and the averaged gradient norm too; after 20 steps on 2
//! processes the held-out embeddings match at cosine ≥ 0.9999. Then the faults: a peer that dies, a peer that steps
//! with another batch size, and a mesh freed under its trainer (scenarios 30–32).

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;
use support::file_weights::test_model_dir;
use support::train_fixture::{config, cosine};
use uform_core::{
    EncodeTextOptions, Executor, ExecutorForRamConfig, Mesh, MeshOptions, Model, ModelLoadRamConfig, Trainer,
    TrainerContrastiveConfig,
};

const ROLE: &str = "UFORM_TRAIN_MESH_ROLE";

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn fixture(world: usize) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/fixtures/train/ddp{world}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
}

/// This rank's pairs at step `k` (from 0): its contiguous share of the global batch, as the fixture recorded.
fn local_batch(f: &Value, rank: usize, k: usize) -> (Vec<String>, Vec<String>) {
    let pairs = f["pairs"].as_array().unwrap();
    f["ranks"][rank]["local_steps"][k]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let p = &pairs[i.as_u64().unwrap() as usize];
            (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string())
        })
        .unzip()
}

/// One peer process: joins the mesh, trains, and writes what happened as JSON to `UFORM_TRAIN_MESH_RESULT`.
#[test]
fn train_mesh_peer_entry() {
    let Some(role) = env(ROLE) else { return };
    let number = |name: &str| env(name).unwrap().parse::<usize>().unwrap();
    let (rank, world, steps) =
        (number("UFORM_TRAIN_MESH_INDEX"), number("UFORM_TRAIN_MESH_COUNT"), number("UFORM_TRAIN_MESH_STEPS"));
    let f = fixture(if role == "fixture" { world } else { 2 });
    let executor = Executor::for_ram(ExecutorForRamConfig { threads: Some(1), ..Default::default() }).unwrap();
    let mesh = Mesh::bootstrap(
        &executor,
        MeshOptions {
            host_domain_index: Some(rank as u32),
            host_domain_count: Some(world as u32),
            directory: env("UFORM_TRAIN_MESH_DIR"),
            job: env("UFORM_TRAIN_MESH_JOB"),
            timeout_seconds: Some(number("UFORM_TRAIN_MESH_TIMEOUT") as u32),
            ..Default::default()
        },
    )
    .unwrap();
    let dir = test_model_dir();
    let model = Model::load_ram(
        dir.to_str().unwrap(),
        ModelLoadRamConfig { executor: Some(executor.clone()), memory_domains: None, precision: None, revision: None },
    )
    .unwrap();
    let trainer =
        Trainer::contrastive(&model, TrainerContrastiveConfig { mesh: Some(mesh.clone()), ..config(&f) }).unwrap();
    let mut out = json!({ "rank": rank, "loss": [], "lr": [], "grad_norm": [], "errors": [] });
    let mut errors = Vec::new();
    let mut error =
        |e: uform_core::Error| errors.push(json!({ "kind": format!("{:?}", e.kind()), "message": e.message() }));
    match role.as_str() {
        "fixture" => {
            for k in 0..steps {
                let (anchors, positives) = local_batch(&f, rank, k);
                let step = trainer.step(&anchors, &positives).unwrap();
                out["loss"].as_array_mut().unwrap().push(json!(step.loss));
                out["lr"].as_array_mut().unwrap().push(json!(step.learning_rate));
                out["grad_norm"].as_array_mut().unwrap().push(json!(step.gradient_norm));
            }
            let held_out = model.encode_text(&strings(&f["held_out"]), EncodeTextOptions::default()).unwrap();
            out["held_out"] = json!(held_out.data);
        }
        "faults" => {
            let (anchors, positives) = local_batch(&f, rank, 0);
            // Rank 1 steps with one pair fewer: both refuse the step, naming the sizes.
            let n = if rank == 1 { anchors.len() - 1 } else { anchors.len() };
            error(trainer.step(&anchors[..n], &positives[..n]).unwrap_err());
            // Rank 1 refuses its own batch (a NUL): both refuse the step, rank 0 naming rank 1.
            let mut bad = positives.clone();
            if rank == 1 {
                bad[0].push('\0');
            }
            error(trainer.step(&anchors, &bad).unwrap_err());
            // The mesh cannot be freed while the trainer borrows it.
            error(mesh.free().unwrap_err());
            // A good step still runs together.
            trainer.step(&anchors, &positives).unwrap();
            if rank == 1 {
                // Dies without leaving, as a killed process does.
                std::process::abort();
            }
            let started = Instant::now();
            error(trainer.step(&anchors, &positives).unwrap_err());
            out["failed_after_seconds"] = json!(started.elapsed().as_secs_f64());
            // A broken group fails at once; the model still embeds, and everything frees.
            error(trainer.step(&anchors, &positives).unwrap_err());
            let embedded = model.encode_text(&anchors, EncodeTextOptions::default()).unwrap();
            out["embedded_rows"] = json!(embedded.rows);
        }
        other => panic!("unknown role {other}"),
    }
    out["errors"] = json!(errors);
    trainer.free().unwrap();
    model.free().unwrap();
    mesh.free().unwrap();
    let result = PathBuf::from(env("UFORM_TRAIN_MESH_RESULT").unwrap());
    let partial = result.with_extension("partial");
    std::fs::write(&partial, out.to_string()).unwrap();
    std::fs::rename(&partial, &result).unwrap();
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("uform-train-mesh-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("mesh")).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `world` peers in `role` for `steps` steps; returns each one's exit success and result, in rank order, and
/// what the job's mesh directory holds afterwards.
fn run(role: &str, world: usize, steps: usize, timeout: u32) -> (Vec<(bool, Option<Value>)>, Vec<String>) {
    let scratch = Scratch::new(&format!("{role}-{world}"));
    let peers: Vec<(Child, PathBuf)> = (0..world)
        .map(|rank| {
            let result = scratch.0.join(format!("result-{rank}.json"));
            let child = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "train_mesh_peer_entry", "--nocapture", "--test-threads=1", "-q"])
                .env(ROLE, role)
                .env("UFORM_TRAIN_MESH_INDEX", rank.to_string())
                .env("UFORM_TRAIN_MESH_COUNT", world.to_string())
                .env("UFORM_TRAIN_MESH_STEPS", steps.to_string())
                .env("UFORM_TRAIN_MESH_TIMEOUT", timeout.to_string())
                .env("UFORM_TRAIN_MESH_DIR", scratch.0.join("mesh"))
                .env("UFORM_TRAIN_MESH_JOB", "train")
                .env("UFORM_TRAIN_MESH_RESULT", &result)
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            (child, result)
        })
        .collect();
    let results = peers
        .into_iter()
        .map(|(mut child, result)| {
            let ok = child.wait().unwrap().success();
            let value = std::fs::read_to_string(result).ok().map(|t| serde_json::from_str(&t).unwrap());
            (ok, value)
        })
        .collect();
    let left = std::fs::read_dir(scratch.0.join("mesh"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    (results, left)
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

/// Runs the fixture on `world` processes for `steps` steps and checks every rank's losses, learning rates and
/// gradient norms against torch DDP's, and (after all 20 steps) the held-out embeddings.
fn reproduces_ddp(world: usize, steps: usize) {
    let f = fixture(world);
    let (results, left) = run("fixture", world, steps, 120);
    assert!(left.is_empty(), "the mesh directory was left with {left:?}");
    let mut worst = 0.0f64;
    let mut held_out = Vec::new();
    for (rank, (ok, result)) in results.into_iter().enumerate() {
        assert!(ok, "rank {rank} failed");
        let r = result.unwrap();
        let want = &f["ranks"][rank];
        for k in 0..steps {
            let (got, expected) = (r["loss"][k].as_f64().unwrap(), want["loss"][k].as_f64().unwrap());
            let rel = (got - expected).abs() / expected.abs();
            worst = worst.max(rel);
            assert!(
                rel <= 1e-4,
                "{world} processes, rank {rank}, step {}: loss {got} vs torch DDP's {expected}",
                k + 1
            );
            let lr = r["lr"][k].as_f64().unwrap();
            assert!((lr - f["lr"][k].as_f64().unwrap()).abs() <= 1e-12, "rank {rank}, step {}: lr {lr}", k + 1);
            let (norm, expected) = (r["grad_norm"][k].as_f64().unwrap(), f["grad_norm"][k].as_f64().unwrap());
            assert!(
                (norm - expected).abs() <= 1e-3 * expected,
                "rank {rank}, step {}: norm {norm} vs {expected}",
                k + 1
            );
        }
        held_out.push(floats(&r["held_out"]));
    }
    eprintln!("{world} processes, {steps} steps: worst relative loss difference {worst:.3e}");
    // Every rank applied the same updates to the same weights.
    for (rank, rows) in held_out.iter().enumerate().skip(1) {
        assert_eq!(rows, &held_out[0], "rank {rank}'s held-out embeddings differ from rank 0's");
    }
    if steps == f["steps"].as_array().unwrap().len() {
        let h = 384;
        for (i, want) in f["held_out_embeddings_after"].as_array().unwrap().iter().enumerate() {
            let c = cosine(&held_out[0][i * h..(i + 1) * h], &floats(want));
            assert!(c >= 0.9999, "held-out text {i}: cosine {c} to torch DDP's after training");
        }
    }
}

#[test]
fn two_processes_reproduce_torch_ddp_for_twenty_steps() {
    reproduces_ddp(2, 20);
}

#[test]
fn four_processes_reproduce_torch_ddp_for_twenty_steps() {
    reproduces_ddp(4, 20);
}

#[test]
fn a_dead_peer_a_mismatched_batch_and_a_borrowed_mesh_fail_clearly() {
    let timeout = 30;
    let (results, left) = run("faults", 2, 0, timeout);
    let (ok1, r1) = &results[1];
    assert!(!ok1 && r1.is_none(), "rank 1 was to die");
    let (ok0, r0) = &results[0];
    assert!(*ok0, "rank 0 failed");
    let r0 = r0.as_ref().unwrap();
    let errors = r0["errors"].as_array().unwrap();
    let kind = |i: usize| errors[i]["kind"].as_str().unwrap().to_string();
    let message = |i: usize| errors[i]["message"].as_str().unwrap().to_string();
    assert_eq!(kind(0), "InvalidArgument", "{}", message(0));
    assert!(message(0).contains("rank 1 has 7 pairs"), "{}", message(0));
    assert_eq!(kind(1), "InvalidArgument", "{}", message(1));
    assert!(message(1).contains("refused by rank 1"), "{}", message(1));
    assert_eq!(kind(2), "InUse", "{}", message(2));
    assert!(["Conflict", "Timeout"].contains(&kind(3).as_str()), "{}", message(3));
    assert!(message(3).contains("rank 1 of the mesh is gone"), "{}", message(3));
    let seconds = r0["failed_after_seconds"].as_f64().unwrap();
    assert!(seconds < timeout as f64 + 5.0, "the step failed only after {seconds} s");
    assert_eq!(kind(4), kind(3), "a broken group fails again: {}", message(4));
    assert_eq!(r0["embedded_rows"], json!(8));
    // Rank 1 never left, but its process is gone from this machine: the last survivor removes the job directory as
    // if it had left (the mesh's rules), and nothing of the collective's store stays.
    assert!(left.is_empty(), "the mesh directory was left with {left:?}");
}
