//! The `Model` handle: weights loaded through [`crate::model`] onto an executor, the lifecycle (borrowed by verbs in
//! flight and by trainers, freed once), and the dispatch of each verb (`encodeText`) to [`crate::verbs`].

use crate::model::{ram, source, vram, RamWeights, Weights};

use crate::error::{Error, Result};
use crate::executor::{placement, Executor};
use crate::families::Architecture;
use crate::handle::{Lease, Lifecycle};
use crate::types::*;
use std::sync::{Arc, Mutex};

/// Weights placed for an executor. Cloning shares the same model.
#[derive(Clone, Debug)]
pub struct Model {
    inner: Arc<Inner>,
}

struct Inner {
    lifecycle: Lifecycle,
    /// How many of the lifecycle's borrows are trainers (the rest are calls in flight), for `free`'s message.
    trainers: Arc<std::sync::atomic::AtomicUsize>,
    description: ModelDescription,
    placement_fallback: Option<String>,
    /// Present until the model is freed or dropped.
    loaded: Mutex<Option<Loaded>>,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("path", &self.description.path)
            .field("residency", &self.description.residency)
            .field("freed", &self.lifecycle.is_freed())
            .finish()
    }
}

/// Fields drop in order: the weights (freed in RAM or on the device), then the executor and its borrow.
struct Loaded {
    weights: Placed,
    executor: Executor,
    /// What the first verb prepares from a RAM model's weights, for its architecture; `None` for a VRAM model.
    prepared: Option<Prepared>,
    _lease: Lease,
}

/// A verb in flight on a model, from [`Model::begin_call`] until dropped (even by a panic): the model counts it as a
/// borrow (a `free` meanwhile is in use) and its executor as in flight (a `drain` meanwhile waits for it).
#[must_use = "the call counts as in flight only while this lives"]
pub struct ModelCall {
    model: Model,
    _in_flight: crate::executor::VerbInFlight,
}

impl Drop for ModelCall {
    fn drop(&mut self) {
        self.model.inner.lifecycle.release();
    }
}

/// A trainer's borrow of a model, returned when dropped.
#[derive(Debug)]
pub struct ModelLoan {
    model: Model,
}

impl ModelLoan {
    pub fn model(&self) -> &Model {
        &self.model
    }
}

impl Drop for ModelLoan {
    fn drop(&mut self) {
        self.model.inner.trainers.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        self.model.inner.lifecycle.release();
    }
}

/// What a model's verbs prepare once from its weights, chosen by the architecture its folder describes when it is
/// loaded: the BERT family's encoder (also for a folder no family runs, whose first verb then says why), or the
/// CLIP or SigLIP towers.
#[derive(Clone)]
pub(crate) enum Prepared {
    /// Prepared by the first `encode_text` or `rerank` (see [`crate::verbs::encode`]); a trainer publishes to it.
    Text(Arc<crate::verbs::encode::EncoderSlot>),
    /// Prepared by the first `encode_image` or `encode_text` (see [`crate::verbs::image`]).
    ImageText(Arc<crate::verbs::image::ImageTextSlot>),
}

impl Prepared {
    fn for_architecture(architecture: Option<Architecture>, precision: Precision) -> Prepared {
        match architecture {
            Some(Architecture::ImageText(_)) => {
                Prepared::ImageText(Arc::new(crate::verbs::image::ImageTextSlot::new(precision)))
            }
            Some(Architecture::Text(_)) | None => {
                Prepared::Text(Arc::new(crate::verbs::encode::EncoderSlot::new(precision)))
            }
        }
    }
}

enum Placed {
    Ram(Arc<RamWeights>),
    Vram(vram::VramWeights),
}

/// Validates `memoryDomains` for weights: a non-empty list of distinct NUMA nodes this machine has.
fn memory_nodes(requested: Option<&[u32]>, executor: &Executor) -> Result<Vec<u32>> {
    let Some(ids) = requested else { return Ok(executor.memory_domains()) };
    let machine = placement::machine();
    let known = || machine.nodes.iter().map(|n| n.os_index.to_string()).collect::<Vec<_>>().join(", ");
    if ids.is_empty() {
        return Err(Error::invalid_argument(
            "config.memory_domains",
            format!("must name at least one NUMA node, got an empty list; known: {}", known()),
        ));
    }
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            return Err(Error::invalid_argument("config.memory_domains", format!("names NUMA node {id} twice")));
        }
        if !machine.nodes.iter().any(|n| n.os_index == *id) {
            return Err(Error::invalid_argument(
                "config.memory_domains",
                format!("names NUMA node {id}, which this machine does not have; known: {}", known()),
            ));
        }
    }
    Ok(ids.to_vec())
}

/// Bytes a RAM model's weights take at `precision`: every floating-point tensor's values at four bytes, or for bf16
/// two for a matrix (what the kernels multiply, and the embedding tables) and four for a vector.
fn weight_bytes(tensors: &[TensorDescription], precision: Precision) -> u64 {
    let floats = tensors.iter().filter(|t| matches!(t.dtype.as_str(), "F32" | "F16" | "BF16"));
    floats
        .map(|t| {
            let values: u64 = t.shape.iter().product();
            let size = if precision == Precision::Bf16 && t.shape.len() >= 2 { 2 } else { 4 };
            values * size
        })
        .sum()
}

fn describe_source(path: &str, source: &source::Source, residency: Residency) -> ModelDescription {
    let tensors: Vec<TensorDescription> = source
        .shards
        .iter()
        .flat_map(|s| &s.tensors)
        .map(|t| TensorDescription {
            name: t.name.clone(),
            dtype: t.dtype.to_string(),
            shape: t.shape.clone(),
            bytes: t.end - t.begin,
        })
        .collect();
    ModelDescription {
        path: path.to_string(),
        format: "safetensors".to_string(),
        architecture: source.architecture.clone(),
        residency,
        memory_domains: Vec::new(),
        devices: Vec::new(),
        bytes: tensors.iter().map(|t| t.bytes).sum(),
        precision: Precision::F32,
        weight_bytes: 0,
        family: None,
        max_tokens: 0,
        dimensions: 0,
        prompts: Vec::new(),
        cross_encoder: false,
        towers: Vec::new(),
        tensors,
    }
}

/// Fills what the folder beside the weights says of the model a family would run, and returns its architecture; a
/// folder no family runs (or none) leaves those fields empty, as loading weights never depends on them.
fn describe_folder(description: &mut ModelDescription, source: &source::Source) -> Option<Architecture> {
    let described = crate::families::describe(&source.directory)?;
    description.family = match described.architecture {
        Architecture::ImageText(variant) => Some(variant.name().to_string()),
        Architecture::Text(_) => description.architecture.clone(),
    };
    description.max_tokens = u32::try_from(described.max_tokens).unwrap_or(u32::MAX);
    description.dimensions = u32::try_from(described.dimensions).unwrap_or(u32::MAX);
    description.prompts = described.prompts;
    description.cross_encoder = described.cross_encoder;
    description.towers = described.towers.iter().map(|t| t.to_string()).collect();
    Some(described.architecture)
}

impl Model {
    fn new(description: ModelDescription, placement_fallback: Option<String>, loaded: Loaded) -> Model {
        Model {
            inner: Arc::new(Inner {
                lifecycle: Lifecycle::new(),
                trainers: Default::default(),
                description,
                placement_fallback,
                loaded: Mutex::new(Some(loaded)),
            }),
        }
    }

    /// Reads safetensors weights into memory bound to NUMA nodes for `config.executor`'s threads. See the
    /// module documentation for paths, checks and placement.
    pub fn load_ram(path: impl AsRef<str>, config: ModelLoadRamConfig) -> Result<Model> {
        let path = path.as_ref();
        let executor = match &config.executor {
            Some(executor) => executor.clone(),
            None => Executor::shared_default()?,
        };
        let lease = Lease::take(executor.lifecycle(), "Executor", "Model.load_ram")?;
        let nodes = memory_nodes(config.memory_domains.as_deref(), &executor)?;
        let precision = config.precision.unwrap_or(ModelLoadRamConfig::DEFAULT_PRECISION);
        if precision == Precision::Bf16 {
            let kernels = crate::kernels::Kernels::for_class(executor.cpu_class())?;
            if kernels.bf16.is_none() {
                let class = executor.cpu_class().unwrap_or_else(crate::capabilities::native_cpu_class);
                return Err(Error::unsupported(format!(
                    "precision bf16 needs a CPU class with AVX512_BF16 (amd-genoa, intel-sapphirerapids); the \
                     executor's class {class} lacks it: load the model with precision f32"
                )));
            }
        }
        let mut refused = None;
        let mut place = |region: &[u8]| {
            if refused.is_none() {
                refused = ram::bind(region, &nodes).err();
            }
        };
        let source = source::open(path, config.revision.as_deref(), &mut place)?;
        let mut description = describe_source(path, &source, Residency::Ram);
        let architecture = describe_folder(&mut description, &source);
        description.precision = precision;
        description.weight_bytes = weight_bytes(&description.tensors, precision);
        let weights = RamWeights::new(source)?;
        let fallback = match refused {
            None => {
                description.memory_domains = nodes;
                None
            }
            Some(why) => Some(format!("the weights are not bound to NUMA nodes {nodes:?}: {why}")),
        };
        let loaded = Loaded {
            weights: Placed::Ram(Arc::new(weights)),
            executor,
            prepared: Some(Prepared::for_architecture(architecture, precision)),
            _lease: lease,
        };
        Ok(Model::new(description, fallback, loaded))
    }

    /// Uploads safetensors weights to every listed device of `config.executor`, on its streams. See the module
    /// documentation.
    pub fn load_vram(path: impl AsRef<str>, config: ModelLoadVramConfig) -> Result<Model> {
        let path = path.as_ref();
        let lease = Lease::take(config.executor.lifecycle(), "Executor", "Model.load_vram")?;
        let ordinals = vram::executor_ordinals(&config.executor.devices()?);
        let positions = vram::plan_devices(vram::driver_present(), &ordinals, config.devices.as_deref())?;
        let source = source::open(path, config.revision.as_deref(), &mut |_| {})?;
        let mut description = describe_source(path, &source, Residency::Vram);
        describe_folder(&mut description, &source);
        description.weight_bytes = description.bytes; // the file's bytes, uploaded as they are
        let weights = vram::VramWeights::upload(&source, &config.executor, &positions, &ordinals)?;
        drop(source); // frees the host copy
        description.devices = positions.iter().map(|&p| ordinals[p]).collect();
        let loaded =
            Loaded { weights: Placed::Vram(weights), executor: config.executor, prepared: None, _lease: lease };
        Ok(Model::new(description, None, loaded))
    }

    /// Reports the model's file, architecture, residency and tensors.
    pub fn describe(&self) -> Result<ModelDescription> {
        self.inner.lifecycle.check("Model", "describe")?;
        Ok(self.inner.description.clone())
    }

    /// The host view of a RAM model's weights, which the verbs read tensors through. The view keeps the weights
    /// alive while it lives, so a `free` racing with a verb frees them when the verb lets go. A VRAM model has no host
    /// view: unsupported.
    pub fn weights(&self) -> Result<Arc<dyn Weights>> {
        self.inner.lifecycle.check("Model", "weights")?;
        let loaded = self.inner.loaded.lock().unwrap_or_else(|p| p.into_inner());
        match loaded.as_ref().map(|l| &l.weights) {
            Some(Placed::Ram(w)) => Ok(w.clone()),
            Some(Placed::Vram(_)) => {
                Err(Error::unsupported("`weights` gives a host view of RAM models only; this model lives in VRAM"))
            }
            None => Err(Error::freed("Model", "weights")),
        }
    }

    /// The executor the model borrows, whose threads or streams the verbs run on.
    pub fn executor(&self) -> Result<Executor> {
        self.inner.lifecycle.check("Model", "executor")?;
        let loaded = self.inner.loaded.lock().unwrap_or_else(|p| p.into_inner());
        loaded.as_ref().map(|l| l.executor.clone()).ok_or_else(|| Error::freed("Model", "executor"))
    }

    /// The device address and byte length of tensor `name`'s replica on device `ordinal`, for a VRAM model; `None`
    /// when the model is in RAM or does not have that device or tensor.
    pub fn device_tensor(&self, ordinal: u32, name: &str) -> Result<Option<(u64, usize)>> {
        self.inner.lifecycle.check("Model", "device_tensor")?;
        let loaded = self.inner.loaded.lock().unwrap_or_else(|p| p.into_inner());
        Ok(match loaded.as_ref().map(|l| &l.weights) {
            Some(Placed::Vram(w)) => w.tensor(ordinal, name),
            _ => None,
        })
    }

    /// Why the RAM weights are not bound to the NUMA nodes asked for, when the OS refused; `None` when bound.
    pub fn placement_fallback(&self) -> Option<&str> {
        self.inner.placement_fallback.as_deref()
    }

    /// Embeds `texts`, one row per text in input order, on the executor's threads.
    ///
    /// While it runs it is a [`ModelCall`]: a `free` meanwhile is in use, a `drain` of the executor waits for it.
    pub fn encode_text(&self, texts: &[String], options: EncodeTextOptions) -> Result<F32Matrix> {
        let _call = self.begin_call("encode_text")?;
        let (weights, executor, prepared) = self.ram_parts("encode_text", "Model.encode_text runs")?;
        match prepared {
            Prepared::ImageText(slot) => {
                crate::verbs::image::encode_text(&slot, weights.as_ref(), &executor, texts, &options)
            }
            Prepared::Text(slot) => {
                crate::verbs::encode::encode_text(&slot, weights.as_ref(), &executor, texts, &options)
            }
        }
    }

    /// Embeds `images` (each an encoded file's bytes), one row per image in input order, with the image tower on the
    /// executor's threads; a [`ModelCall`] while it runs, as [`Model::encode_text`].
    pub fn encode_image(&self, images: &[&[u8]], options: EncodeImageOptions) -> Result<F32Matrix> {
        let _call = self.begin_call("encode_image")?;
        let (weights, executor, prepared) = self.ram_parts("encode_image", "Model.encode_image runs")?;
        let Prepared::ImageText(slot) = prepared else {
            return Err(Error::unsupported(format!(
                "{} needs a model with an image tower (CLIP, SigLIP); this model has none",
                crate::path::name("Model.encode_image")
            )));
        };
        crate::verbs::image::encode_image(&slot, weights.as_ref(), &executor, images, &options)
    }

    /// Scores `documents` against `query` with a cross-encoder, on the executor's threads; a [`ModelCall`] while
    /// it runs, as [`Model::encode_text`].
    pub fn rerank(
        &self,
        query: impl AsRef<str>,
        documents: &[String],
        options: RerankOptions,
    ) -> Result<Vec<RerankScore>> {
        let _call = self.begin_call("rerank")?;
        let (weights, executor, prepared) = self.ram_parts("rerank", "Model.rerank runs")?;
        let Prepared::Text(slot) = prepared else {
            return Err(Error::unsupported(format!(
                "{} needs a cross-encoder (a *ForSequenceClassification checkpoint); this is an image-text model",
                crate::path::name("Model.rerank")
            )));
        };
        crate::verbs::encode::rerank(&slot, weights.as_ref(), &executor, query.as_ref(), documents, &options)
    }

    /// A RAM model's weights, executor and what its verbs prepare, for a verb `method` (`what` says who needs RAM,
    /// like `Model.encode_text runs`); a VRAM model is unsupported.
    pub(crate) fn ram_parts(&self, method: &str, what: &str) -> Result<(Arc<RamWeights>, Executor, Prepared)> {
        let loaded = self.inner.loaded.lock().unwrap_or_else(|p| p.into_inner());
        match loaded.as_ref() {
            Some(Loaded { weights: Placed::Ram(w), executor, prepared: Some(prepared), .. }) => {
                Ok((w.clone(), executor.clone(), prepared.clone()))
            }
            Some(_) => {
                let (who, rest) = what.split_once(' ').unwrap_or((what, ""));
                Err(Error::unsupported(format!(
                    "{} {rest} on RAM models only for now; this model lives in VRAM",
                    crate::path::name(who)
                )))
            }
            None => Err(Error::freed("Model", method)),
        }
    }

    /// Counts a call of `method` as in flight until the returned [`ModelCall`] drops. Verbs take one for their run;
    /// a binding's asynchronous form takes one when it accepts the call, before handing it to another thread, so
    /// that from the moment the call returns its promise, a `free` is in use and a `drain` waits for it.
    pub fn begin_call(&self, method: &str) -> Result<ModelCall> {
        let executor = {
            let loaded = self.inner.loaded.lock().unwrap_or_else(|p| p.into_inner());
            match loaded.as_ref() {
                Some(loaded) => loaded.executor.clone(),
                None => return Err(Error::freed("Model", method)),
            }
        };
        self.inner.lifecycle.borrow("Model", method)?;
        Ok(ModelCall { model: self.clone(), _in_flight: executor.verb_in_flight() })
    }

    /// Lends the model to a trainer (`borrower`, the call that borrows, like `Trainer.contrastive`) until the
    /// returned [`ModelLoan`] drops: `free` meanwhile is an in-use error naming the trainers.
    pub fn lend(&self, borrower: &str) -> Result<ModelLoan> {
        self.inner.lifecycle.borrow("Model", borrower)?;
        self.inner.trainers.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Ok(ModelLoan { model: self.clone() })
    }

    /// Whether `free` has run: every later call but `free` fails as freed.
    pub fn is_freed(&self) -> bool {
        self.inner.lifecycle.is_freed()
    }

    /// Releases the weights (RAM: frees them once no verb holds their view; VRAM: frees the device buffers) and
    /// returns the executor's borrow; a second call does nothing. Dropping the last clone does the same.
    pub fn free(&self) -> Result<()> {
        // Only verbs borrow a model, and they end on their own: the message says to wait, not to free them.
        let begun = self.inner.lifecycle.begin_free("Model", ("verb", "verbs")).map_err(|_| {
            let trainers = self.inner.trainers.load(std::sync::atomic::Ordering::Acquire);
            if trainers > 0 {
                let (whom, pronoun) =
                    if trainers == 1 { ("trainer borrows", "it") } else { ("trainers borrow", "them") };
                return Error::in_use(format!(
                    "`free` cannot free this Model yet: {trainers} {whom} it; free {pronoun} first"
                ));
            }
            Error::in_use(format!(
                "`free` cannot free this Model yet: a call is in flight on it (an {}, or its asynchronous form not yet \
                 settled); wait for it to finish first",
                crate::path::name("encode_text")
            ))
        })?;
        if !begun {
            return Ok(());
        }
        let loaded = self.inner.loaded.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(loaded);
        Ok(())
    }
}
