// The Swift binding-overhead benchmark (`swift run -c release uform-swift-bench`, after `cargo xtask package swift`;
// in the self-contained package folder the same command). Nanoseconds per call of `capabilitiesCompiled()` and of
// `drain()` on an idle one-thread executor, side by side in the same run with the library's bare no-op
// `uform_bench_noop`, called through the same C module `UFormFFI` the generated Swift calls through. Prints on stdout
//   overhead swift: noop_ns=N capabilities_ns=C drain_ns=D capabilities/noop=C/N drain/noop=D/N
// (the format of the other languages' lines in `cargo xtask bench overhead`), then
//   overhead swift: lift_ns_per_float=X
// the nanoseconds per float of lifting a 2,000 x 384 matrix the library built (`uform_bench_f32_matrix`, lowered as
// `encodeText`'s result is) into `F32Matrix` through the generated `FfiConverterTypeF32Matrix_lift`, and the detail
// on stderr. Not a test: it asserts nothing but that the lifted matrix holds what the library put in it. Warm-up,
// then best-of-rounds, interleaved across passes so that drift in the machine's speed touches every subject alike.

import Foundation
import UForm
import UFormFFI

let rounds = 5
let passes = 3
let roundNanos = 40_000_000.0  // what one round of a subject should take once calibrated

func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// A subject: a name and a loop that makes `n` calls, returning something so the optimizer keeps the calls.
final class Subject {
    let name: String
    let loop: (Int) throws -> Int
    var iterations = 1000
    var best = Double.greatestFiniteMagnitude
    var sink = 0

    init(_ name: String, _ loop: @escaping (Int) throws -> Int) {
        self.name = name
        self.loop = loop
    }

    func warmUp() throws {
        let deadline = now() + 500_000_000
        while now() < deadline {
            sink &+= try loop(10_000)
        }
        let start = now()
        sink &+= try loop(20_000)
        let ns = max(Double(now() - start) / 20_000, 0.01)
        iterations = min(max(Int(roundNanos / ns), 10_000), 20_000_000)
    }

    func measure() throws {
        for _ in 0..<rounds {
            let start = now()
            sink &+= try loop(iterations)
            best = min(best, Double(now() - start) / Double(iterations))
        }
    }
}

func format(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", locale: Locale(identifier: "en_US_POSIX"), value)
}

let executor = try Executor.forRam(config: ExecutorForRamConfig(threads: 1))
try executor.drain()
_ = capabilitiesCompiled()
let subjects = [
    Subject("noop") { n in
        for _ in 0..<n {
            uform_bench_noop()
        }
        return n
    },
    Subject("capabilities") { n in
        var total = 0
        for _ in 0..<n {
            total &+= capabilitiesCompiled().utf8.count
        }
        return total
    },
    Subject("drain") { n in
        for _ in 0..<n {
            try executor.drain()
        }
        return n
    },
]
/// Lifting matrices the library built: each round lowers `batch` 2,000 x 384 matrices in Rust (not timed), then
/// times lifting them all; the best round's nanoseconds per float.
final class Lift {
    let rows: UInt32 = 2_000
    let columns: UInt32 = 384
    let batch = 16
    var best = Double.greatestFiniteMagnitude
    var sink: Float = 0

    func round() throws {
        let buffers = (0..<batch).map { _ in uform_bench_f32_matrix(rows, columns) }
        var lifted = [F32Matrix]()
        lifted.reserveCapacity(batch)
        let start = now()
        for buffer in buffers {
            lifted.append(try FfiConverterTypeF32Matrix_lift(buffer))
        }
        let elapsed = Double(now() - start)
        let floats = Int(rows) * Int(columns)
        best = min(best, elapsed / Double(batch * floats))
        for matrix in lifted {
            // The i-th float is i (exact below 2^24): a layout or byte-order slip shows here.
            let last = floats - 1
            guard matrix.rows == rows, matrix.columns == columns, matrix.data.count == floats,
                matrix.data[0] == 0, matrix.data[1] == 1, matrix.data[last] == Float(last)
            else {
                FileHandle.standardError.write("swift: the lifted matrix is not what the library built\n".data(using: .utf8)!)
                exit(1)
            }
            sink += matrix.data[floats / 2]
        }
    }
}

let lift = Lift()
for subject in subjects {
    try subject.warmUp()
}
try lift.round()
for _ in 0..<passes {
    for subject in subjects {
        try subject.measure()
    }
    for _ in 0..<rounds {
        try lift.round()
    }
}
try executor.free()

let noop = subjects[0].best
let capabilities = subjects[1].best
let drain = subjects[2].best
let detail = subjects.map { "\($0.name) \($0.iterations)" }.joined(separator: ", ")
let sink = subjects.reduce(0) { $0 &+ $1.sink }
FileHandle.standardError.write(
    ("swift: best of \(rounds) rounds x \(passes) passes; iterations \(detail); lift \(lift.batch) matrices of "
        + "\(lift.rows) x \(lift.columns) a round; sink \(sink != 0 && lift.sink != 0)\n").data(using: .utf8)!
)
print(
    "overhead swift: noop_ns=\(format(noop, 1)) capabilities_ns=\(format(capabilities, 1)) drain_ns=\(format(drain, 1)) "
        + "capabilities/noop=\(format(capabilities / noop, 2)) drain/noop=\(format(drain / noop, 2))"
)
print("overhead swift: lift_ns_per_float=\(format(lift.best, 2))")
