//! Images to `pixel_values` (#32): decoding and preprocessing as a Hugging Face image processor does it, for
//! `CLIPImageProcessor` and `SiglipImageProcessor` read from `preprocessor_config.json` ([`Preprocess`]).
//!
//! The reference is what `processor(transformers.image_utils.load_image(file))["pixel_values"][0]` gives with
//! transformers' Pillow backend (`CLIPImageProcessorPil`, `SiglipImageProcessorPil`, what
//! `AutoImageProcessor` returns without torchvision):
//!
//! 1. Decode (PNG, JPEG, WebP, GIF: the `image` crate) and apply the EXIF orientation (`ImageOps.exif_transpose`).
//! 2. Convert to RGB as Pillow's `convert("RGB")`: alpha dropped, never composited (`load_image` converts before
//!    the processor sees the image); grey replicated; palettes expanded; 16-bit samples as Pillow reads them (the
//!    high byte of RGB, RGBA and grey-alpha; grey `I;16` clipped to 255, as Pillow's `I;16` to `RGB` does).
//! 3. Resize with Pillow's `Image.resize` ([`resample`]): the same separable convolution, fixed-point coefficients
//!    and rounding, so the pixels match Pillow's bit for bit given the same decoded pixels.
//! 4. Centre crop as transformers' `center_crop` (the top-left at `(size - crop) // 2`, zero padding when the
//!    image is smaller than the crop), rescale (a float64 product cast to float32) and normalise in float32.
//!
//! Every decoder is held to a pixel budget ([`MAX_PIXELS`], [`MAX_ALLOC`]) checked against the dimensions the
//! header declares before any pixel is allocated, so a decompression bomb costs nothing. A file that is empty, not
//! an image, truncated, over the budget or animated is an invalid argument naming `images[i]`; a decoder's panic
//! is caught and reported the same way.

mod resample;

use crate::error::{Error, Result};
use crate::model::layout::read_json;
use image::codecs::gif::GifDecoder;
use image::codecs::jpeg::JpegDecoder;
use image::codecs::png::PngDecoder;
use image::codecs::webp::WebPDecoder;
use image::{AnimationDecoder, DynamicImage, ImageDecoder, ImageError, ImageFormat, Limits};
use resample::Filter;
use serde_json::Value;
use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// The most pixels (width × height, as the header declares them) an image may have: 64 Mpx, 8192 × 8192. Larger
/// files are refused before decoding. Pillow warns at 89 Mpx and refuses at 179 Mpx; no image model looks at more
/// than a few hundred thousand pixels.
pub const MAX_PIXELS: u64 = 1 << 26;
/// The most bytes a decoder may allocate for one image: 8 bytes a pixel of [`MAX_PIXELS`] (16-bit RGBA), 512 MiB.
pub const MAX_ALLOC: u64 = 8 * MAX_PIXELS;

/// How `preprocessor_config.json` says an image becomes `pixel_values`.
#[derive(Clone, Debug, PartialEq)]
pub struct Preprocess {
    /// `do_resize`: the target and Pillow's filter (`resample`).
    pub resize: Option<(Resize, Filter)>,
    /// `do_center_crop`: `crop_size` as (height, width).
    pub crop: Option<(usize, usize)>,
    /// `do_rescale`: `rescale_factor` (1/255).
    pub rescale: Option<f64>,
    /// `do_normalize`: `image_mean` and `image_std` per channel.
    pub normalize: Option<([f32; 3], [f32; 3])>,
}

/// Where `size` resizes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resize {
    /// `{"shortest_edge": n}`: the shorter side to n, the longer one in proportion (truncated).
    ShortestEdge(usize),
    /// `{"height": h, "width": w}`: exactly h × w.
    Exact(usize, usize),
}

/// What the processor classes default to when a field is missing (transformers 5's class attributes).
struct Defaults {
    resize: Resize,
    resample: i64,
    center_crop: bool,
    mean: [f64; 3],
    std: [f64; 3],
    /// Whether an integer `size` is a square (SigLIP) or the shortest edge (CLIP).
    square: bool,
}

const CLIP: Defaults = Defaults {
    resize: Resize::ShortestEdge(224),
    resample: 3,
    center_crop: true,
    mean: [0.48145466, 0.4578275, 0.40821073],
    std: [0.26862954, 0.26130258, 0.27577711],
    square: false,
};
const SIGLIP: Defaults = Defaults {
    resize: Resize::Exact(224, 224),
    resample: 3,
    center_crop: false,
    mean: [0.5; 3],
    std: [0.5; 3],
    square: true,
};

impl Preprocess {
    /// Reads `preprocessor_config.json` (`path` is the file, or the folder holding it). A processor other than
    /// CLIP's or SigLIP's, or a field whose value this does not implement, is unsupported, naming both.
    pub fn read(path: &Path) -> Result<Preprocess> {
        let (dir, name) = if path.is_dir() {
            (path, "preprocessor_config.json")
        } else {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("preprocessor_config.json");
            (path.parent().unwrap_or(Path::new(".")), name)
        };
        let file = dir.join(name);
        let json = read_json(dir, name)?.ok_or_else(|| {
            Error::unsupported(format!(
                "an image model needs a `preprocessor_config.json`; `{}` has none",
                dir.display()
            ))
        })?;
        Preprocess::from_json(&json).map_err(|what| Error::unsupported(format!("`{}`: {what}", file.display())))
    }

    /// The processor of a parsed `preprocessor_config.json`; `Err` says which field is not implemented.
    pub fn from_json(json: &Value) -> Result<Preprocess, String> {
        let class = json.get("image_processor_type").and_then(Value::as_str).unwrap_or("");
        let defaults = match class.trim_end_matches("Fast").trim_end_matches("Pil") {
            "CLIPImageProcessor" => &CLIP,
            "SiglipImageProcessor" => &SIGLIP,
            _ => {
                return Err(format!(
                    "`image_processor_type` is {class:?}; images are preprocessed as \"CLIPImageProcessor\" or \
                     \"SiglipImageProcessor\" do it"
                ))
            }
        };
        let flag = |key: &str, default: bool| match json.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!("`{key}` is {other}, not true or false")),
        };
        for key in ["do_pad", "do_image_splitting", "do_reduce_labels"] {
            if flag(key, false)? {
                return Err(format!("`{key}` is true, which is not implemented"));
            }
        }
        // Pillow backend: an RGB image is always what it resizes; `do_convert_rgb` false would keep grey or alpha.
        if !flag("do_convert_rgb", true)? {
            return Err("`do_convert_rgb` is false; images are always converted to RGB".into());
        }
        let resize = if flag("do_resize", true)? {
            let size = match json.get("size") {
                None | Some(Value::Null) => defaults.resize,
                Some(value) => size(value, "size", defaults.square)?,
            };
            let resample = match json.get("resample") {
                None | Some(Value::Null) => defaults.resample,
                Some(value) => value.as_i64().ok_or_else(|| format!("`resample` is {value}, not an integer"))?,
            };
            let filter = match resample {
                2 => Filter::Bilinear,
                3 => Filter::Bicubic,
                other => {
                    return Err(format!(
                        "`resample` is {other}; 2 (bilinear) and 3 (bicubic) are the resampling filters implemented"
                    ))
                }
            };
            Some((size, filter))
        } else {
            None
        };
        let crop = if flag("do_center_crop", defaults.center_crop)? {
            match json.get("crop_size") {
                None | Some(Value::Null) if class.starts_with("CLIP") => Some((224, 224)),
                None | Some(Value::Null) => return Err("`do_center_crop` is true but `crop_size` is missing".into()),
                Some(value) => match size(value, "crop_size", true)? {
                    Resize::Exact(h, w) => Some((h, w)),
                    Resize::ShortestEdge(_) => unreachable!("a square size is exact"),
                },
            }
        } else {
            None
        };
        if crop.is_none() && !matches!(resize, Some((Resize::Exact(..), _))) {
            return Err("neither `crop_size` nor an exact `size` fixes the output's height and width".into());
        }
        let rescale = if flag("do_rescale", true)? {
            match json.get("rescale_factor") {
                None | Some(Value::Null) => Some(1.0 / 255.0),
                Some(value) => match value.as_f64() {
                    Some(f) if f.is_finite() => Some(f),
                    _ => return Err(format!("`rescale_factor` is {value}, not a finite number")),
                },
            }
        } else {
            None
        };
        let normalize = if flag("do_normalize", true)? {
            let mean = triple(json.get("image_mean"), "image_mean", defaults.mean)?;
            let std = triple(json.get("image_std"), "image_std", defaults.std)?;
            if std.contains(&0.0) {
                return Err(format!("`image_std` is {std:?}: a zero would divide by zero"));
            }
            Some((mean, std))
        } else {
            None
        };
        Ok(Preprocess { resize, crop, rescale, normalize })
    }

    /// The output's (height, width): `pixel_values` holds 3 × height × width floats an image.
    pub fn side(&self) -> (usize, usize) {
        match (self.crop, self.resize) {
            (Some(crop), _) => crop,
            (None, Some((Resize::Exact(h, w), _))) => (h, w),
            // `from_json` refuses a processor whose output's shape varies.
            _ => unreachable!("Preprocess without a fixed side"),
        }
    }

    /// Decodes `bytes`, the caller's `images[index]`, and writes its `pixel_values` to `out`: 3 × height × width
    /// floats ([`Preprocess::side`]), channel-major, as transformers' processor gives `pixel_values[index]`.
    pub fn pixels(&self, bytes: &[u8], index: usize, out: &mut [f32]) -> Result<()> {
        let (height, width) = self.side();
        if out.len() != 3 * height * width {
            return Err(Error::internal(format!(
                "pixels: `out` holds {} floats, not 3 x {height} x {width}",
                out.len()
            )));
        }
        let mut rgb = decode(bytes, index)?;
        if let Some((resize, filter)) = self.resize {
            let (h, w) = match resize {
                Resize::Exact(h, w) => (h, w),
                Resize::ShortestEdge(short) => shortest_edge(rgb.height, rgb.width, short),
            };
            rgb = Rgb { width: w, height: h, data: resample::resize(&rgb.data, rgb.width, rgb.height, w, h, filter) };
        }
        let (top, left) = match self.crop {
            // transformers' `center_crop`: `(size - crop) // 2` when the image covers the crop, else the image sits
            // at `ceil((crop - size) / 2)` in a zero crop; both are this, per side.
            Some(_) => (offset(rgb.height, height), offset(rgb.width, width)),
            None => (0, 0),
        };
        let scale = |v: u8| match self.rescale {
            Some(factor) => (f64::from(v) * factor) as f32,
            None => f32::from(v),
        };
        let plane = height * width;
        for c in 0..3 {
            let (mean, std) = self.normalize.map_or((0.0, 1.0), |(m, s)| (m[c], s[c]));
            let values = self.normalize.is_some();
            for y in 0..height {
                for x in 0..width {
                    let (sy, sx) = (y as isize + top, x as isize + left);
                    let inside = sy >= 0 && sx >= 0 && (sy as usize) < rgb.height && (sx as usize) < rgb.width;
                    let v = if inside { rgb.data[(sy as usize * rgb.width + sx as usize) * 3 + c] } else { 0 };
                    let v = scale(v);
                    out[c * plane + y * width + x] = if values { (v - mean) / std } else { v };
                }
            }
        }
        Ok(())
    }
}

/// The source row (or column) of the crop's first: `(size - crop) // 2` when the image covers it, else minus the
/// padding `ceil((crop - size) / 2)`.
fn offset(size: usize, crop: usize) -> isize {
    if size >= crop {
        ((size - crop) / 2) as isize
    } else {
        -((crop - size).div_ceil(2) as isize)
    }
}

/// transformers' `get_resize_output_image_size(default_to_square=False)`: the shorter side to `short`, the longer
/// to `int(short * long / short_side)` (a float64 quotient, truncated).
fn shortest_edge(height: usize, width: usize, short: usize) -> (usize, usize) {
    let (small, large) = if width <= height { (width, height) } else { (height, width) };
    let long = ((short as f64 * large as f64) / small as f64) as usize;
    if width <= height {
        (long.max(1), short)
    } else {
        (short, long.max(1))
    }
}

/// A `size` or `crop_size`: `{"shortest_edge": n}`, `{"height": h, "width": w}`, or an integer (a square when
/// `square`, else the shortest edge, as the processors read a legacy integer).
fn size(value: &Value, key: &str, square: bool) -> Result<Resize, String> {
    let positive = |v: Option<&Value>, field: &str| match v.and_then(Value::as_u64) {
        Some(n) if n > 0 && n <= 1 << 16 => Ok(n as usize),
        _ => Err(format!("`{key}.{field}` is {}, not a side from 1 to 65536", v.unwrap_or(&Value::Null))),
    };
    match value {
        Value::Number(_) => {
            let n = positive(Some(value), "")?;
            Ok(if square { Resize::Exact(n, n) } else { Resize::ShortestEdge(n) })
        }
        Value::Object(map) => {
            if let Some(field) = ["longest_edge", "max_height", "max_width"].iter().find(|f| map.contains_key(**f)) {
                return Err(format!("`{key}.{field}` is not implemented"));
            }
            match (map.get("shortest_edge"), map.get("height"), map.get("width")) {
                (Some(s), None, None) if !square => Ok(Resize::ShortestEdge(positive(Some(s), "shortest_edge")?)),
                (None, Some(h), Some(w)) => {
                    Ok(Resize::Exact(positive(Some(h), "height")?, positive(Some(w), "width")?))
                }
                _ => Err(format!(
                    "`{key}` is {value}; it takes \"height\" and \"width\"{}",
                    if square { "" } else { ", or \"shortest_edge\"" }
                )),
            }
        }
        other => Err(format!("`{key}` is {other}, not a size")),
    }
}

/// `image_mean` or `image_std`: three numbers, or one for every channel; float32 as numpy's normalise casts them.
fn triple(value: Option<&Value>, key: &str, default: [f64; 3]) -> Result<[f32; 3], String> {
    let numbers: Vec<f64> = match value {
        None | Some(Value::Null) => default.to_vec(),
        Some(Value::Number(n)) => vec![n.as_f64().unwrap_or(f64::NAN); 3],
        Some(Value::Array(items)) => items.iter().map(|v| v.as_f64().unwrap_or(f64::NAN)).collect(),
        Some(other) => return Err(format!("`{key}` is {other}, not three numbers")),
    };
    match numbers[..] {
        [a, b, c] if numbers.iter().all(|n| n.is_finite()) => Ok([a as f32, b as f32, c as f32]),
        _ => Err(format!("`{key}` is {}, not three finite numbers", value.unwrap_or(&Value::Null))),
    }
}

/// An 8-bit RGB image, row-major, 3 bytes a pixel.
struct Rgb {
    width: usize,
    height: usize,
    data: Vec<u8>,
}

/// Decodes `images[index]` to upright RGB, or says what is wrong with it.
fn decode(bytes: &[u8], index: usize) -> Result<Rgb> {
    let bad = |what: String| Error::invalid_argument(&format!("images[{index}]"), what);
    if bytes.is_empty() {
        return Err(bad("is empty: zero bytes are not an image".into()));
    }
    let format = match image::guess_format(bytes) {
        Ok(f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP | ImageFormat::Gif)) => f,
        Ok(other) => {
            return Err(bad(format!(
                "is a {} image; images may be PNG, JPEG, WebP or GIF",
                other.extensions_str().first().unwrap_or(&"?").to_uppercase()
            )))
        }
        Err(_) => {
            return Err(bad(format!(
                "is not an image: its first bytes ({}) are those of no format decoded here (PNG, JPEG, WebP, GIF)",
                first_bytes(bytes)
            )))
        }
    };
    let name = match format {
        ImageFormat::Png => "PNG",
        ImageFormat::Jpeg => "JPEG",
        ImageFormat::WebP => "WebP",
        _ => "GIF",
    };
    match catch_unwind(AssertUnwindSafe(|| decode_as(bytes, format))) {
        Ok(Ok(rgb)) => Ok(rgb),
        Ok(Err(problem)) => Err(bad(problem.describe(name))),
        Err(payload) => {
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(bad(format!("could not be decoded as {name}: the decoder failed ({text})")))
        }
    }
}

/// Up to 8 first bytes, in hex.
fn first_bytes(bytes: &[u8]) -> String {
    bytes.iter().take(8).map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")
}

/// Why a decode failed, before the message names the argument and the format.
enum Problem {
    /// Declared (width, height) over [`MAX_PIXELS`], or zero.
    Dimensions(u32, u32),
    /// The decoder would allocate more than [`MAX_ALLOC`].
    Memory,
    Animated,
    Truncated(String),
    Malformed(String),
}

impl Problem {
    fn describe(self, format: &str) -> String {
        match self {
            Problem::Dimensions(w, h) if w == 0 || h == 0 => {
                format!("is a {format} that declares {w} x {h} pixels: an image has at least one")
            }
            Problem::Dimensions(w, h) => format!(
                "is a {format} that declares {w} x {h} pixels ({} pixels), over the budget of {MAX_PIXELS} pixels (64 \
                 Mpx, e.g. 8192 x 8192); it was refused before decoding",
                u64::from(w) * u64::from(h)
            ),
            Problem::Memory => {
                format!("is a {format} whose decoding needs more than the budget of {MAX_ALLOC} bytes (512 MiB)")
            }
            Problem::Animated => {
                format!("is an animated {format} (more than one frame); pass a still image, such as one frame of it")
            }
            Problem::Truncated(e) => format!("is a truncated {format}: the file ends before its image data does ({e})"),
            Problem::Malformed(e) => format!("could not be decoded as {format}: {e}"),
        }
    }
}

impl From<ImageError> for Problem {
    fn from(e: ImageError) -> Problem {
        match e {
            ImageError::Limits(_) => Problem::Memory,
            ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
                Problem::Truncated(io.to_string())
            }
            other => {
                let text = other.to_string();
                let lower = text.to_ascii_lowercase();
                if lower.contains("eof") || lower.contains("end of") || lower.contains("truncat") {
                    Problem::Truncated(text)
                } else {
                    Problem::Malformed(text)
                }
            }
        }
    }
}

fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(u32::MAX);
    limits.max_image_height = Some(u32::MAX);
    limits.max_alloc = Some(MAX_ALLOC);
    limits
}

/// Refuses dimensions over the budget, from the header alone.
fn check_dimensions((w, h): (u32, u32)) -> Result<(), Problem> {
    if w == 0 || h == 0 || u64::from(w) * u64::from(h) > MAX_PIXELS {
        return Err(Problem::Dimensions(w, h));
    }
    Ok(())
}

/// Whether an animation has a second frame (frames that fail to decode do not count: the first frame is what
/// the still decode reads, and its errors are reported there).
fn animated<'a>(decoder: impl AnimationDecoder<'a>) -> bool {
    decoder.into_frames().take(2).filter(|f| f.is_ok()).count() > 1
}

fn decode_as(bytes: &[u8], format: ImageFormat) -> Result<Rgb, Problem> {
    let cursor = || Cursor::new(bytes);
    let image = match format {
        ImageFormat::Png => {
            let decoder = PngDecoder::with_limits(cursor(), limits())?;
            check_dimensions(decoder.dimensions())?;
            if decoder.is_apng()? && animated(PngDecoder::with_limits(cursor(), limits())?.apng()?) {
                return Err(Problem::Animated);
            }
            still(decoder)?
        }
        ImageFormat::Jpeg => {
            let decoder = JpegDecoder::new(cursor())?;
            check_dimensions(decoder.dimensions())?;
            if !jpeg_complete(bytes) {
                return Err(Problem::Truncated("no end-of-image marker after the last scan".into()));
            }
            still(decoder)?
        }
        ImageFormat::WebP => {
            let decoder = WebPDecoder::new(cursor())?;
            check_dimensions(decoder.dimensions())?;
            // The RIFF header's size: image-webp decodes a file missing its last bytes, libwebp (Pillow) refuses it.
            let riff = u64::from(u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]));
            if riff + 8 > bytes.len() as u64 {
                return Err(Problem::Truncated(format!(
                    "its RIFF header declares {} bytes, the file has {}",
                    riff + 8,
                    bytes.len()
                )));
            }
            if decoder.has_animation() {
                let mut frames = WebPDecoder::new(cursor())?;
                frames.set_limits(limits())?;
                if animated(frames) {
                    return Err(Problem::Animated);
                }
            }
            still(decoder)?
        }
        _ => {
            let decoder = GifDecoder::new(cursor())?;
            check_dimensions(decoder.dimensions())?;
            let mut frames = GifDecoder::new(cursor())?;
            frames.set_limits(limits())?;
            if animated(frames) {
                return Err(Problem::Animated);
            }
            still(decoder)?
        }
    };
    Ok(to_rgb(image))
}

/// Decodes the first (only) frame within the budget, upright as its EXIF orientation says.
fn still(mut decoder: impl ImageDecoder) -> Result<DynamicImage, Problem> {
    decoder.set_limits(limits())?;
    // Pillow's `exif_transpose` ignores an orientation it cannot read; so does this.
    let orientation = decoder.orientation().unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut image = DynamicImage::from_decoder(decoder)?;
    image.apply_orientation(orientation);
    Ok(image)
}

/// Whether a JPEG's last scan is followed by an end-of-image marker. zune-jpeg decodes a truncated JPEG to grey
/// where its data ends; Pillow (libjpeg) refuses it ("image file is truncated"). An `FF D9` cannot occur inside
/// entropy-coded data (a data `FF` is followed by `00`), so the file is whole when one follows the last `FF DA`
/// (start of scan); an EXIF thumbnail's markers come before the image's first scan.
fn jpeg_complete(bytes: &[u8]) -> bool {
    let Some(scan) = bytes.windows(2).rposition(|w| w == [0xFF, 0xDA]) else { return false };
    bytes[scan..].windows(2).any(|w| w == [0xFF, 0xD9])
}

/// Pillow's `convert("RGB")` of what it would have opened: alpha dropped, grey replicated, 16-bit samples
/// narrowed as Pillow reads them.
fn to_rgb(image: DynamicImage) -> Rgb {
    let (width, height) = (image.width() as usize, image.height() as usize);
    let data = match image {
        DynamicImage::ImageRgb8(buffer) => buffer.into_raw(),
        DynamicImage::ImageRgba8(buffer) => buffer.as_raw().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect(),
        DynamicImage::ImageLuma8(buffer) => buffer.as_raw().iter().flat_map(|&v| [v, v, v]).collect(),
        DynamicImage::ImageLumaA8(buffer) => buffer.as_raw().chunks_exact(2).flat_map(|p| [p[0], p[0], p[0]]).collect(),
        // Pillow opens 16-bit RGB(A) and grey-alpha PNGs as 8-bit modes through the raw modes `RGB;16B`,
        // `RGBA;16B`, `LA;16B`: the high byte of each sample.
        DynamicImage::ImageRgb16(buffer) => buffer.as_raw().iter().map(|&v| (v >> 8) as u8).collect(),
        DynamicImage::ImageRgba16(buffer) => {
            buffer.as_raw().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]].map(|v| (v >> 8) as u8)).collect()
        }
        DynamicImage::ImageLumaA16(buffer) => {
            buffer.as_raw().chunks_exact(2).flat_map(|p| [(p[0] >> 8) as u8; 3]).collect()
        }
        // A 16-bit grey PNG is Pillow's `I;16`, whose conversion to RGB clips at 255 rather than scaling.
        DynamicImage::ImageLuma16(buffer) => buffer.as_raw().iter().flat_map(|&v| [v.min(255) as u8; 3]).collect(),
        other => other.to_rgb8().into_raw(),
    };
    Rgb { width, height, data }
}

#[cfg(test)]
mod tests;
