{{ banner }}
//
// The Swift side of the IDL's enums, beside the Swift uniffi generates from uniffi/uform.udl (the same module).
// The UDL declares each enum a custom type over `i32` from `{{ bulk_crate }}`, so uniffi emits no Swift of its own
// for it and calls what is here: an argument crosses as the case's number (the one C uses) in a register, where
// uniffi's own enums allocate a buffer in Rust, fill it and free it on every call; inside a record the number is
// an Int32, big-endian, as uniffi writes every Int32. A parameter uniffi cannot default (an enum's default) gets
// its default from an overload at the end of this file.

import Foundation

// Depending on the consumer's build setup, the low-level FFI code
// might be in a separate module, or it might be compiled inline into
// this module. This is a bit of light hackery to work with both.
#if canImport(UFormFFI)
import UFormFFI
#endif

/// What a malformed enum value is; uniffi's own `UniffiInternalError` is private to its file.
fileprivate enum UFormEnumError: Swift.Error, CustomStringConvertible {
    case bufferOverflow
    case unknownCase(name: String, value: Int32)

    var description: String {
        switch self {
        case .bufferOverflow: return "Reading an enum's value would read past the end of the buffer"
        case let .unknownCase(name, value): return "\(value) is no case of \(name)"
        }
    }
}

/// Reads a big-endian Int32 at the reader's offset and moves past it, as uniffi's own `readInt` does.
fileprivate func readEnumValue(_ reader: inout (data: Data, offset: Data.Index)) throws -> Int32 {
    let range = reader.offset..<reader.offset + MemoryLayout<Int32>.size
    guard reader.data.count >= range.upperBound else {
        throw UFormEnumError.bufferOverflow
    }
    var value: Int32 = 0
    let _ = withUnsafeMutableBytes(of: &value, { reader.data.copyBytes(to: $0, from: range) })
    reader.offset = range.upperBound
    return value.bigEndian
}

/// Appends a big-endian Int32, as uniffi's own `writeInt` does.
fileprivate func writeEnumValue(_ value: Int32, into buf: inout [UInt8]) {
    var bigEndian = value.bigEndian
    withUnsafeBytes(of: &bigEndian) { buf.append(contentsOf: $0) }
}
{%- for e in enums %}

{{ e }}
{%- endfor %}
{%- for o in overloads %}

{{ o }}
{%- endfor %}
