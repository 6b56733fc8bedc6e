//! Pillow's `Image.resize` for 8-bit images with a convolution filter (`libImaging/Resample.c`): a horizontal
//! then a vertical pass, each a 1-D convolution whose support grows with the downscale factor (antialiasing), with
//! coefficients computed in float64, normalised to sum to one, and rounded to 22-bit fixed point; each pass rounds
//! half up and clips to 0..=255. Written here rather than taken from a crate so that it is Pillow's arithmetic
//! step for step (the same bounds, coefficients and rounding), not an approximation of it.

use std::ops::Range;

/// A resampling filter, Pillow's `resample`: 2 bilinear, 3 bicubic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    Bilinear,
    Bicubic,
}

impl Filter {
    fn support(self) -> f64 {
        match self {
            Filter::Bilinear => 1.0,
            Filter::Bicubic => 2.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        let x = x.abs();
        match self {
            Filter::Bilinear if x < 1.0 => 1.0 - x,
            // Keys' cubic with a = -0.5, in Pillow's form.
            Filter::Bicubic if x < 1.0 => ((-0.5 + 2.0) * x - (-0.5 + 3.0)) * x * x + 1.0,
            Filter::Bicubic if x < 2.0 => (((x - 5.0) * x + 8.0) * x - 4.0) * -0.5,
            _ => 0.0,
        }
    }
}

/// `PRECISION_BITS`: 32 - 8 (the result) - 2 (headroom for negative lobes and sums over one).
const PRECISION_BITS: u32 = 22;

/// One output sample's taps: the first input index, and its fixed-point coefficients.
struct Taps {
    first: Vec<usize>,
    count: Vec<usize>,
    /// `stride` coefficients an output sample.
    coefficients: Vec<i32>,
    stride: usize,
}

/// Pillow's `precompute_coeffs` followed by `normalize_coeffs_8bpc`, for the whole input (`box` 0..in_size).
fn taps(in_size: usize, out_size: usize, filter: Filter) -> Taps {
    // `(double)(in1 - in0) / outSize`, the box edges being floats: exact below 2^24.
    let scale = f64::from(in_size as f32) / out_size as f64;
    let filterscale = scale.max(1.0);
    let support = filter.support() * filterscale;
    let stride = support.ceil() as usize * 2 + 1;
    let mut first = Vec::with_capacity(out_size);
    let mut count = Vec::with_capacity(out_size);
    let mut coefficients = vec![0i32; out_size * stride];
    let mut weights = vec![0f64; stride];
    for xx in 0..out_size {
        let center = (xx as f64 + 0.5) * scale;
        let ss = 1.0 / filterscale;
        // C's `(int)` truncates toward zero, as `as` does.
        let xmin = ((center - support + 0.5) as i64).max(0);
        let xmax = ((center + support + 0.5) as i64).min(in_size as i64);
        let n = ((xmax - xmin).max(0) as usize).min(stride);
        let mut sum = 0.0;
        for (x, w) in weights[..n].iter_mut().enumerate() {
            *w = filter.weight(((x as i64 + xmin) as f64 - center + 0.5) * ss);
            sum += *w;
        }
        for (x, w) in weights[..n].iter().enumerate() {
            let k = if sum != 0.0 { w / sum } else { *w };
            let fixed = k * f64::from(1u32 << PRECISION_BITS);
            coefficients[xx * stride + x] = if k < 0.0 { (-0.5 + fixed) as i32 } else { (0.5 + fixed) as i32 };
        }
        first.push(xmin as usize);
        count.push(n);
    }
    Taps { first, count, coefficients, stride }
}

/// Pillow's `clip8`: the accumulator (which starts at one half) shifted down and clipped to a byte.
fn clip8(acc: i64) -> u8 {
    (acc >> PRECISION_BITS).clamp(0, 255) as u8
}

/// Resizes `rgb` (`width` × `height`, 3 bytes a pixel) to `out_width` × `out_height` as Pillow (13) does: the
/// horizontal pass first (over only the rows the vertical pass reads), unless the height shrinks by more than
/// twice as many pixels as the width, when the vertical pass goes first. The order changes the rounding of the
/// intermediate image, so it is Pillow's rule exactly.
pub fn resize(rgb: &[u8], width: usize, height: usize, out_width: usize, out_height: usize, filter: Filter) -> Vec<u8> {
    if out_width == 0 || out_height == 0 || width == 0 || height == 0 {
        return Vec::new();
    }
    let (need_horizontal, need_vertical) = (out_width != width, out_height != height);
    let shrink = |from: usize, to: usize| from as i64 - to as i64;
    let horizontal_first =
        !(shrink(height, out_height) > 0 && shrink(height, out_height) > shrink(width, out_width) * 2);
    if horizontal_first {
        let vertical = taps(height, out_height, filter);
        // The rows the vertical pass reads: Pillow resamples only those horizontally.
        let rows = vertical.first[0]..vertical.first[out_height - 1] + vertical.count[out_height - 1];
        let (image, image_width, row0) = if need_horizontal {
            (horizontal_pass(rgb, width, rows.clone(), out_width, filter), out_width, rows.start)
        } else {
            (rgb.to_vec(), width, 0)
        };
        if need_vertical {
            vertical_pass(&image, image_width, row0, &vertical, out_height)
        } else {
            image
        }
    } else {
        let vertical = taps(height, out_height, filter);
        let image = vertical_pass(rgb, width, 0, &vertical, out_height);
        if need_horizontal {
            horizontal_pass(&image, width, 0..out_height, out_width, filter)
        } else {
            image
        }
    }
}

/// Pillow's `ImagingResampleHorizontal_8bpc` over `rows` of `rgb` (`width` pixels a row).
fn horizontal_pass(rgb: &[u8], width: usize, rows: Range<usize>, out_width: usize, filter: Filter) -> Vec<u8> {
    let taps = taps(width, out_width, filter);
    let half = 1i64 << (PRECISION_BITS - 1);
    let mut out = vec![0u8; rows.len() * out_width * 3];
    for (yy, y) in rows.enumerate() {
        let row = &rgb[y * width * 3..(y + 1) * width * 3];
        for xx in 0..out_width {
            let k = &taps.coefficients[xx * taps.stride..][..taps.count[xx]];
            let xmin = taps.first[xx];
            for c in 0..3 {
                let mut acc = half;
                for (x, &k) in k.iter().enumerate() {
                    acc += i64::from(row[(xmin + x) * 3 + c]) * i64::from(k);
                }
                out[(yy * out_width + xx) * 3 + c] = clip8(acc);
            }
        }
    }
    out
}

/// Pillow's `ImagingResampleVertical_8bpc`: `rgb`'s first row is the source's row `row0`.
fn vertical_pass(rgb: &[u8], width: usize, row0: usize, taps: &Taps, out_height: usize) -> Vec<u8> {
    let half = 1i64 << (PRECISION_BITS - 1);
    let line = width * 3;
    let mut out = vec![0u8; out_height * line];
    for yy in 0..out_height {
        let k = &taps.coefficients[yy * taps.stride..][..taps.count[yy]];
        let ymin = taps.first[yy] - row0;
        for i in 0..line {
            let mut acc = half;
            for (y, &k) in k.iter().enumerate() {
                acc += i64::from(rgb[(ymin + y) * line + i]) * i64::from(k);
            }
            out[yy * line + i] = clip8(acc);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_size_is_the_same_image() {
        let rgb: Vec<u8> = (0..5 * 4 * 3).map(|i| (i * 7 % 256) as u8).collect();
        for filter in [Filter::Bilinear, Filter::Bicubic] {
            assert_eq!(resize(&rgb, 5, 4, 5, 4, filter), rgb);
        }
    }

    #[test]
    fn a_flat_image_stays_flat() {
        let rgb = vec![77u8; 13 * 9 * 3];
        for filter in [Filter::Bilinear, Filter::Bicubic] {
            for (w, h) in [(4, 3), (30, 20), (13, 2), (1, 1)] {
                assert!(resize(&rgb, 13, 9, w, h, filter).iter().all(|&v| v == 77), "{filter:?} {w}x{h}");
            }
        }
    }
}
