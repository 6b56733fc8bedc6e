{{ doc }}///
/// It crosses as the UDL's custom type `{{ name }}` over `i32`: the number C uses for the case (an argument in a
/// register, a record's field as uniffi writes an `i32`); generated/swift/Sources/UForm/Enums.swift holds its Swift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum {{ name }} {
{%- for v in variants %}
    {{ v.name }},
{%- endfor %}
}

impl From<{{ name }}> for uform_core::{{ name }} {
    fn from(value: {{ name }}) -> Self {
        match value {
{%- for v in variants %}
            {{ name }}::{{ v.name }} => uform_core::{{ name }}::{{ v.name }},
{%- endfor %}
        }
    }
}

impl From<uform_core::{{ name }}> for {{ name }} {
    fn from(value: uform_core::{{ name }}) -> Self {
        match value {
{%- for v in variants %}
            uform_core::{{ name }}::{{ v.name }} => {{ name }}::{{ v.name }},
{%- endfor %}
        }
    }
}

// SAFETY: an `i32` crosses by value (uniffi's own `i32` conversion does the same); `try_lift` refuses any number
// that names no case, so a foreign caller cannot make an invalid `{{ name }}`.
unsafe impl uniffi::FfiConverter<crate::UniFfiTag> for {{ name }} {
    type FfiType = i32;

    fn lower(obj: {{ name }}) -> i32 {
        match obj {
{%- for v in variants %}
            {{ name }}::{{ v.name }} => {{ v.number }},
{%- endfor %}
        }
    }

    fn try_lift(v: i32) -> uniffi::Result<{{ name }}> {
        match v {
{%- for v in variants %}
            {{ v.number }} => Ok({{ name }}::{{ v.name }}),
{%- endfor %}
            other => uniffi::deps::anyhow::bail!("{other} is no {{ name }}"),
        }
    }

    fn write(obj: {{ name }}, buf: &mut Vec<u8>) {
        <i32 as uniffi::FfiConverter<crate::UniFfiTag>>::write(Self::lower(obj), buf)
    }

    fn try_read(buf: &mut &[u8]) -> uniffi::Result<{{ name }}> {
        Self::try_lift(<i32 as uniffi::FfiConverter<crate::UniFfiTag>>::try_read(buf)?)
    }

    const TYPE_ID_META: uniffi::MetadataBuffer =
        uniffi::MetadataBuffer::from_code(uniffi::metadata::codes::TYPE_CUSTOM)
            .concat_str("{{ bulk_crate }}")
            .concat_str("{{ name }}")
            .concat(<i32 as uniffi::TypeId<crate::UniFfiTag>>::TYPE_ID_META);
}

uniffi::derive_ffi_traits!(local {{ name }});
