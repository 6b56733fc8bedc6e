/// A row-major matrix of floats a verb returns: `rows` rows of `columns` values in `data`.
///
/// It crosses as the UDL's custom type `F32Matrix` over `bytes`, laid out for a bulk copy on the Swift side
/// (generated/swift/Sources/UForm/F32Matrix.swift reads it): uniffi's `i32` big-endian length n, then n bytes,
/// `u32` rows, `u32` columns and the `rows * columns` floats, all native-endian.
#[derive(Clone, Debug, PartialEq)]
pub struct F32Matrix {
    pub data: Vec<f32>,
    pub rows: u32,
    pub columns: u32,
}

impl From<uform_core::F32Matrix> for F32Matrix {
    fn from(value: uform_core::F32Matrix) -> Self {
        F32Matrix { data: value.data, rows: value.rows, columns: value.columns }
    }
}

/// Bytes before the floats: uniffi's length, the rows, the columns.
pub const F32_MATRIX_HEADER: usize = 12;

// SAFETY: the matrix crosses in a `RustBuffer` exactly as uniffi's own `bytes` do (`lower` hands over a `Vec<u8>`,
// `try_lift` takes one back), only the bytes inside are laid out by `write` and read by `try_read`.
unsafe impl uniffi::FfiConverter<crate::UniFfiTag> for F32Matrix {
    uniffi::ffi_converter_rust_buffer_lift_and_lower!(crate::UniFfiTag);

    fn write(obj: F32Matrix, buf: &mut Vec<u8>) {
        let floats = std::mem::size_of_val(obj.data.as_slice());
        // uniffi frames `bytes` with an i32 and panics past it, as it does for its own sequences.
        let length = i32::try_from(F32_MATRIX_HEADER - 4 + floats).expect("an F32Matrix under 2 GiB");
        buf.reserve_exact(F32_MATRIX_HEADER + floats);
        buf.extend_from_slice(&length.to_be_bytes());
        buf.extend_from_slice(&obj.rows.to_ne_bytes());
        buf.extend_from_slice(&obj.columns.to_ne_bytes());
        let start = buf.len();
        buf.resize(start + floats, 0);
        for (bytes, value) in buf[start..].chunks_exact_mut(4).zip(&obj.data) {
            bytes.copy_from_slice(&value.to_ne_bytes());
        }
    }

    fn try_read(buf: &mut &[u8]) -> uniffi::Result<F32Matrix> {
        let word = |bytes: &[u8], at: usize| -> [u8; 4] { bytes[at..at + 4].try_into().expect("four bytes") };
        uniffi::check_remaining(buf, F32_MATRIX_HEADER)?;
        let length = i32::from_be_bytes(word(buf, 0));
        let rows = u32::from_ne_bytes(word(buf, 4));
        let columns = u32::from_ne_bytes(word(buf, 8));
        let floats = usize::try_from(length).ok().and_then(|n| n.checked_sub(F32_MATRIX_HEADER - 4));
        let Some(floats) = floats.filter(|n| n % 4 == 0 && (n / 4) as u64 == u64::from(rows) * u64::from(columns))
        else {
            uniffi::deps::anyhow::bail!("an F32Matrix of {rows} x {columns} cannot be {length} bytes long");
        };
        uniffi::check_remaining(buf, F32_MATRIX_HEADER + floats)?;
        let data = buf[F32_MATRIX_HEADER..F32_MATRIX_HEADER + floats]
            .chunks_exact(4)
            .map(|bytes| f32::from_ne_bytes(bytes.try_into().expect("four bytes")))
            .collect();
        *buf = &buf[F32_MATRIX_HEADER + floats..];
        Ok(F32Matrix { data, rows, columns })
    }

    const TYPE_ID_META: uniffi::MetadataBuffer =
        uniffi::MetadataBuffer::from_code(uniffi::metadata::codes::TYPE_CUSTOM)
            .concat_str("{{ bulk_crate }}")
            .concat_str("F32Matrix")
            .concat(<Vec<u8> as uniffi::TypeId<crate::UniFfiTag>>::TYPE_ID_META);
}

uniffi::derive_ffi_traits!(local F32Matrix);
