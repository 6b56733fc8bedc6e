{{ banner }}
//
// The Swift side of the builtin `f32_matrix` result, beside the Swift uniffi generates from uniffi/uform.udl (the
// same module). The UDL declares `F32Matrix` as a custom type over `bytes` from `{{ bulk_crate }}`, so uniffi emits no
// converter of its own for it and calls this one. A returned matrix's `RustBuffer` holds
//
//     offset 0   Int32, big-endian: n, the count of the bytes after it (uniffi's framing of `bytes`), 8 + 4 * count
//     offset 4   UInt32 rows, native-endian
//     offset 8   UInt32 columns, native-endian
//     offset 12  rows * columns Float values, native-endian, row after row
//
// and the floats become `[Float]` with one bulk copy (`copyMemory`, which needs no alignment): no per-element read.

import Foundation

// Depending on the consumer's build setup, the low-level FFI code
// might be in a separate module, or it might be compiled inline into
// this module. This is a bit of light hackery to work with both.
#if canImport(UFormFFI)
import UFormFFI
#endif

/**
 * A row-major matrix of floats a verb returns: `rows` rows of `columns` values in `data`.
 */
public struct F32Matrix: Equatable, Hashable {
    /**
     * `rows * columns` values, row after row.
     */
    public var data: [Float]
    /**
     * Rows, one per input.
     */
    public var rows: UInt32
    /**
     * Values per row.
     */
    public var columns: UInt32

    public init(data: [Float], rows: UInt32, columns: UInt32) {
        self.data = data
        self.rows = rows
        self.columns = columns
    }
}

#if compiler(>=6)
extension F32Matrix: Sendable {}
#endif

/// What a malformed matrix buffer is; uniffi's own `UniffiInternalError` is private to its file.
fileprivate enum F32MatrixBufferError: Swift.Error, CustomStringConvertible {
    case bufferOverflow
    case incompleteData
    case shapeMismatch

    var description: String {
        switch self {
        case .bufferOverflow: return "Reading the F32Matrix would read past the end of the buffer"
        case .incompleteData: return "The buffer still has data after the F32Matrix"
        case .shapeMismatch: return "The F32Matrix's rows and columns do not match its length"
        }
    }
}

/// The bytes before the floats: the length, the rows, the columns.
fileprivate let f32MatrixHeader = 12

/// Reads one matrix at `offset` of `bytes` and moves `offset` past it.
fileprivate func readF32Matrix(_ bytes: UnsafeRawBufferPointer, _ offset: inout Int) throws -> F32Matrix {
    guard offset >= 0, bytes.count - offset >= f32MatrixHeader else {
        throw F32MatrixBufferError.bufferOverflow
    }
    let length = Int(Int32(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
    let rows = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
    let columns = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
    let floatBytes = length - (f32MatrixHeader - 4)
    guard floatBytes >= 0, floatBytes % MemoryLayout<Float>.size == 0 else {
        throw F32MatrixBufferError.shapeMismatch
    }
    let count = floatBytes / MemoryLayout<Float>.size
    guard UInt64(rows) * UInt64(columns) == UInt64(count) else {
        throw F32MatrixBufferError.shapeMismatch
    }
    let start = offset + f32MatrixHeader
    guard bytes.count - start >= floatBytes else {
        throw F32MatrixBufferError.bufferOverflow
    }
    let floats = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + floatBytes)])
    let data = [Float](unsafeUninitializedCapacity: count) { buffer, initializedCount in
        if count > 0 {
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: floats)
        }
        initializedCount = count
    }
    offset = start + floatBytes
    return F32Matrix(data: data, rows: rows, columns: columns)
}

/// Hands a buffer Rust lowered back to Rust.
fileprivate func freeF32MatrixBuffer(_ buf: RustBuffer) {
    var status = RustCallStatus()
    ffi_{{ ffi_crate }}_rustbuffer_free(buf, &status)
}

#if swift(>=5.8)
@_documentation(visibility: private)
#endif
public struct FfiConverterTypeF32Matrix {
    public static func lift(_ buf: RustBuffer) throws -> F32Matrix {
        defer { freeF32MatrixBuffer(buf) }
        guard let base = buf.data else {
            throw F32MatrixBufferError.bufferOverflow
        }
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(base), count: Int(buf.len))
        var offset = 0
        let value = try readF32Matrix(bytes, &offset)
        guard offset == bytes.count else {
            throw F32MatrixBufferError.incompleteData
        }
        return value
    }

    public static func lower(_ value: F32Matrix) -> RustBuffer {
        var bytes = [UInt8]()
        write(value, into: &bytes)
        return bytes.withUnsafeBufferPointer { (pointer: UnsafeBufferPointer<UInt8>) -> RustBuffer in
            var status = RustCallStatus()
            return ffi_{{ ffi_crate }}_rustbuffer_from_bytes(
                ForeignBytes(len: Int32(pointer.count), data: pointer.baseAddress), &status)
        }
    }

    public static func read(from buf: inout (data: Data, offset: Data.Index)) throws -> F32Matrix {
        let base = buf.data.startIndex
        var offset = buf.offset - base
        let value = try buf.data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> F32Matrix in
            try readF32Matrix(bytes, &offset)
        }
        buf.offset = base + offset
        return value
    }

    public static func write(_ value: F32Matrix, into buf: inout [UInt8]) {
        let floatBytes = value.data.count * MemoryLayout<Float>.size
        var length = Int32(f32MatrixHeader - 4 + floatBytes).bigEndian
        var rows = value.rows
        var columns = value.columns
        buf.reserveCapacity(buf.count + f32MatrixHeader + floatBytes)
        withUnsafeBytes(of: &length) { buf.append(contentsOf: $0) }
        withUnsafeBytes(of: &rows) { buf.append(contentsOf: $0) }
        withUnsafeBytes(of: &columns) { buf.append(contentsOf: $0) }
        value.data.withUnsafeBytes { buf.append(contentsOf: $0) }
    }
}

#if swift(>=5.8)
@_documentation(visibility: private)
#endif
public func FfiConverterTypeF32Matrix_lift(_ buf: RustBuffer) throws -> F32Matrix {
    return try FfiConverterTypeF32Matrix.lift(buf)
}

#if swift(>=5.8)
@_documentation(visibility: private)
#endif
public func FfiConverterTypeF32Matrix_lower(_ value: F32Matrix) -> RustBuffer {
    return FfiConverterTypeF32Matrix.lower(value)
}
