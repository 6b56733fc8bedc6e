{{ doc }}public enum {{ name }}: Equatable, Hashable {
{%- for v in variants %}
{{ v.doc }}    case {{ v.name }}
{%- endfor %}
}

#if compiler(>=6)
extension {{ name }}: Sendable {}
#endif

#if swift(>=5.8)
@_documentation(visibility: private)
#endif
public struct FfiConverterType{{ name }} {
    public static func lift(_ value: Int32) throws -> {{ name }} {
        switch value {
{%- for v in variants %}
        case {{ v.number }}: return .{{ v.name }}
{%- endfor %}
        default: throw UFormEnumError.unknownCase(name: "{{ name }}", value: value)
        }
    }

    public static func lower(_ value: {{ name }}) -> Int32 {
        switch value {
{%- for v in variants %}
        case .{{ v.name }}: return {{ v.number }}
{%- endfor %}
        }
    }

    public static func read(from buf: inout (data: Data, offset: Data.Index)) throws -> {{ name }} {
        return try lift(readEnumValue(&buf))
    }

    public static func write(_ value: {{ name }}, into buf: inout [UInt8]) {
        writeEnumValue(lower(value), into: &buf)
    }
}

#if swift(>=5.8)
@_documentation(visibility: private)
#endif
public func FfiConverterType{{ name }}_lift(_ value: Int32) throws -> {{ name }} {
    return try FfiConverterType{{ name }}.lift(value)
}

#if swift(>=5.8)
@_documentation(visibility: private)
#endif
public func FfiConverterType{{ name }}_lower(_ value: {{ name }}) -> Int32 {
    return FfiConverterType{{ name }}.lower(value)
}
