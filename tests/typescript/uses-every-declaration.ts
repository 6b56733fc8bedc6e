// Type-checks every declaration of the seed page against generated/typescript/index.d.ts under strict tsc.
// It is never run: it only has to compile.
import * as uform from "../../generated/typescript/index.js";
import {
    Executor,
    Mesh,
    GpuVendor,
    Mood,
    MultimemTier,
    UFormError,
    Model,
    Trainer,
    type CompiledTrainer,
    type TrainStep,
    type TrainerContrastiveConfig,
    type CompiledExecutor,
    type CompiledMesh,
    type CompiledMeshDescription,
    type ExecutorForRamConfig,
    type ExecutorForVramConfig,
    type ExecutorOnPoolConfig,
    type GpuDevice,
    type MeshDescription,
    type MeshOptions,
    type UFormErrorCode,
} from "../../generated/typescript/index.js";

export function everything(): void {
    const devices: GpuDevice[] = uform.gpuDevices();
    const first: GpuDevice | undefined = devices[0];
    if (first) {
        const vendor: GpuVendor = first.vendor;
        const ordinal: number = first.vendorOrdinal;
        const cls: string | null = first.gpuClass;
        const units: number = first.computeUnits;
        const bytes: number = first.memoryBytes;
        const name: string = first.name;
        void [vendor, ordinal, cls, units, bytes, name];
    }
    const compiled: string = uform.capabilitiesCompiled();
    const available: string = uform.capabilitiesAvailable();
    void [compiled, available];

    const ram: ExecutorForRamConfig = {
        memoryDomains: [0],
        cpuClass: "intel-haswell",
        threads: 2,
        deferredLimit: 8,
        scratchLimit: 1 << 26,
    };
    const pool: ExecutorOnPoolConfig = { memoryDomains: [0], cpuClass: "intel-haswell", deferredLimit: 8 };
    const vram: ExecutorForVramConfig = {
        devices: [0, 1],
        gpuClass: "nvidia-hopper",
        memoryDomains: [0],
        cpuClass: "intel-haswell",
        streams: [1n, 2n],
        scratchLimit: 1 << 20,
        deferredLimit: 8,
    };
    {
        using executor = Executor.forRam(ram);
        executor.drain();
        executor.drain(Mood.Parked);
        executor.drain(Mood.Spinning);
        const handle: CompiledExecutor = executor.compiled;
        void handle;
        const options: MeshOptions = {
            hostDomainIndex: 0,
            hostDomainCount: 1,
            gpusPerMultimemDomain: 8,
            directory: "/tmp/uform",
            job: "run-1",
            timeoutSeconds: 1,
        };
        using mesh = Mesh.bootstrap(executor, options);
        const description: MeshDescription = mesh.describe();
        const tier: MultimemTier = description.multimemTier;
        const isSwitch: boolean = tier === MultimemTier.SwitchReduced || tier === MultimemTier.PeerRead;
        const raw: CompiledMeshDescription = mesh.compiled.describe();
        const rawTier: string = raw.multimemTier;
        const meshHandle: CompiledMesh = mesh.compiled;
        const shape: number[] = [
            description.hostDomainIndex,
            description.hostDomainCount,
            description.gpusPerMultimemDomain,
            description.multimemDomainCount,
            description.gpus.length,
        ];
        void [isSwitch, rawTier, meshHandle, shape];
        mesh.free();
        mesh[Symbol.dispose]();
    }
    Executor.forRam().free();
    Executor.forVram(vram).free();
    Executor.forVram().free();
    Executor.onPool(0x1000n, pool).free();
    Executor.onPool(0x1000n).free();
    Mesh.bootstrap(Executor.forRam()).free();
    const vendors: GpuVendor[] = [GpuVendor.Unknown, GpuVendor.Nvidia, GpuVendor.Amd, GpuVendor.Apple];
    const tiers: string[] = [MultimemTier.SwitchReduced, MultimemTier.PeerRead];
    void [vendors, tiers];
    try {
        Executor.forRam({ threads: 0 });
    } catch (error) {
        if (error instanceof UFormError) {
            const code: UFormErrorCode = error.code;
            const message: string = error.message;
            void [code, message];
        }
    }
}

export async function trainers(executor: Executor): Promise<void> {
    using model = Model.loadRam("all-MiniLM-L6-v2", { executor });
    // A Hub name at a revision, on the default executor.
    using byName = Model.loadRam("sentence-transformers/all-MiniLM-L6-v2", { revision: "main" });
    void byName;
    const config: TrainerContrastiveConfig = {
        learningRate: 1e-4,
        weightDecay: 0.01,
        warmupSteps: 2,
        totalSteps: 20,
        maxGradNorm: 1,
        scale: 20,
        maxTokens: 128,
        dropout: 0,
        seed: 12345,
    };
    {
        using trainer = Trainer.contrastive(model, config);
        const first: TrainStep = trainer.step(["an anchor"], ["a positive"]);
        const numbers: number[] = [first.step, first.loss, first.learningRate, first.gradientNorm, first.seconds];
        const pending: Promise<TrainStep> = trainer.stepAsync(["an anchor"], ["a positive"]);
        const second: TrainStep = await pending;
        const handle: CompiledTrainer = trainer.compiled;
        const raw: TrainStep = handle.step(["an anchor"], ["a positive"]);
        handle.save("/tmp/raw");
        trainer.save("/tmp/trained");
        void [numbers, second, raw];
        trainer.free();
        trainer[Symbol.dispose]();
    }
    Trainer.contrastive(model).free();
    Trainer.contrastive(model, {}).free();
    // @ts-expect-error: a rate is a number, not a string
    Trainer.contrastive(model, { learningRate: "1e-4" });
    // @ts-expect-error: a trainer is made for a Model, not an Executor
    Trainer.contrastive(executor);
    // @ts-expect-error: the config has no such field
    Trainer.contrastive(model, { lr: 1e-4 });
    // @ts-expect-error: exactOptionalPropertyTypes: absent is left out, not undefined
    Trainer.contrastive(model, { dropout: undefined });
    // @ts-expect-error: Trainer has no public constructor
    new Trainer();
}

export async function families(executor: Executor): Promise<void> {
    using model = Model.loadRam("a-family-checkpoint", { executor });
    const d: uform.ModelDescription = model.describe();
    const family: string | null = d.family;
    const counts: number[] = [d.maxTokens, d.dimensions];
    const prompts: string[] = d.prompts;
    const crossEncoder: boolean = d.crossEncoder;
    const encode: uform.EncodeTextOptions = { dimensions: 24, promptName: "query" };
    const matrix: uform.F32Matrix = model.encodeText(["a"], encode);
    const prompted: uform.F32Matrix = await model.encodeTextAsync(["a"], { prompt: "query: " });
    const options: uform.RerankOptions = { sorted: true, maxTokens: 64 };
    const scores: uform.RerankScore[] = model.rerank("a query", ["a document"], options);
    const pending: Promise<uform.RerankScore[]> = model.rerankAsync("a query", ["a document"]);
    const best: number[] = [scores[0]!.index, scores[0]!.score, (await pending).length];
    const raw: uform.RerankScore[] = model.compiled.rerank("a query", ["a document"], {});
    const towers: string[] = d.towers;
    const image: uform.EncodeImageOptions = { normalize: false };
    const pixels: uform.F32Matrix = model.encodeImage([new Uint8Array([0x89]), new Uint8Array(4)], image);
    const later: uform.F32Matrix = await model.encodeImageAsync([new Uint8Array(0)]);
    const frozen: ReadonlyArray<Uint8Array> = [new Uint8Array(1)];
    const viaCompiled: uform.F32Matrix = model.compiled.encodeImage(frozen, {});
    void [family, counts, prompts, crossEncoder, matrix, prompted, best, raw, towers, pixels, later, viaCompiled];
    // @ts-expect-error: the images are byte arrays, not strings
    model.encodeImage(["a.png"]);
    // @ts-expect-error: a prompt's name is a string
    model.encodeText(["a"], { promptName: 1 });
    // @ts-expect-error: the documents are a list
    model.rerank("a query", "a document");
}
