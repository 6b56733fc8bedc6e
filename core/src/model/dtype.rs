//! Tensor values as the compute reads them: a tensor found by name and checked against the shape a model's
//! configuration implies ([`view`]), and its little-endian `F32`, `F16` or `BF16` values decoded to f32
//! ([`decode`], [`read`]). Every family reads its weights through these, whatever its architecture.

use crate::error::{Error, ErrorKind, Result};
use crate::model::{TensorView, Weights};

/// Decodes little-endian `F32`, `F16` or `BF16` values into `out`.
pub fn decode(view: &TensorView<'_>, out: &mut [f32]) -> Result<()> {
    let size = match view.dtype {
        "F32" => 4,
        "F16" | "BF16" => 2,
        other => {
            return Err(Error::unsupported(format!(
                "{} reads F32, F16 and BF16 weights; tensor `{}` is {other}",
                crate::path::name("encode_text"),
                view.name
            )))
        }
    };
    if view.data.len() != out.len() * size {
        return Err(Error::internal(format!(
            "tensor `{}`: {} bytes for {} {} values",
            view.name,
            view.data.len(),
            out.len(),
            view.dtype
        )));
    }
    match view.dtype {
        "F32" => out.iter_mut().zip(view.data.chunks_exact(4)).for_each(|(o, b)| {
            *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }),
        "BF16" => out.iter_mut().zip(view.data.chunks_exact(2)).for_each(|(o, b)| {
            *o = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16);
        }),
        _ => out.iter_mut().zip(view.data.chunks_exact(2)).for_each(|(o, b)| {
            *o = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        }),
    }
    Ok(())
}

/// IEEE half to single, exactly (subnormals, infinities and NaN included).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = man · 2⁻²⁴, exact in f32.
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, _) => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// A tensor by name with the expected shape.
pub fn view<'w>(weights: &'w dyn Weights, name: &str, shape: &[usize]) -> Result<TensorView<'w>> {
    let view = weights
        .tensor(name)
        .ok_or_else(|| Error::new(ErrorKind::InvalidArgument, format!("the weights have no tensor `{name}`")))?;
    if view.shape != shape {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("tensor `{name}` has shape {:?}; the model's config.json implies {shape:?}", view.shape),
        ));
    }
    Ok(view)
}

/// A tensor by name with the expected shape, decoded to f32.
pub fn read(weights: &dyn Weights, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
    let view = view(weights, name, shape)?;
    let mut out = vec![0.0; shape.iter().product()];
    decode(&view, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_convert_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8000).to_bits(), (-0.0f32).to_bits());
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95);
    }
}
