//! Checks against transformers' own crops (tests/fixtures/images/make_crops.py) and the hostile files.

use super::*;
use crate::error::ErrorKind;
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/images")
}

fn files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(fixtures().join("files")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert_eq!(files.len(), 13, "{files:?}");
    files
}

/// The largest difference, in uint8 levels, between `out` and the crop PNG `reference` rescaled and normalised.
fn levels_apart(processor: &Preprocess, out: &[f32], reference: &Path) -> f32 {
    let crop = image::open(reference).unwrap().to_rgb8();
    let (h, w) = processor.side();
    assert_eq!((crop.height() as usize, crop.width() as usize), (h, w), "{}", reference.display());
    let (mean, std) = processor.normalize.unwrap();
    let factor = processor.rescale.unwrap();
    let mut worst = 0f32;
    for c in 0..3 {
        for y in 0..h {
            for x in 0..w {
                let v = crop.get_pixel(x as u32, y as u32)[c];
                let expected = ((f64::from(v) * factor) as f32 - mean[c]) / std[c];
                let got = out[c * h * w + y * w + x];
                worst = worst.max((got - expected).abs() * std[c] / factor as f32);
            }
        }
    }
    worst
}

/// Each processor's largest difference a file, in levels: (file, clip, siglip).
fn compare(crops: &Path) -> Vec<(String, f32, f32)> {
    let processors: Vec<Preprocess> = ["clip", "siglip"]
        .iter()
        .map(|p| Preprocess::read(&crops.join(p).join("preprocessor_config.json")).unwrap())
        .collect();
    files()
        .iter()
        .map(|file| {
            let stem = file.file_stem().unwrap().to_str().unwrap().to_string();
            let bytes = std::fs::read(file).unwrap();
            let [clip, siglip] = [0, 1].map(|i| {
                let processor = &processors[i];
                let (h, w) = processor.side();
                let mut out = vec![f32::NAN; 3 * h * w];
                processor.pixels(&bytes, 0, &mut out).unwrap_or_else(|e| panic!("{stem}: {e}"));
                let dir = crops.join(["clip", "siglip"][i]);
                levels_apart(processor, &out, &dir.join(format!("{stem}.png")))
            });
            eprintln!("{stem:>14}: clip {clip:.2} levels, siglip {siglip:.2}");
            (stem, clip, siglip)
        })
        .collect()
}

/// The largest difference allowed a file, in uint8 levels. PNG and WebP decode to Pillow's pixels exactly and the
/// resize is Pillow's arithmetic (its pass order included), so they match exactly (measured: 0 at 64 and at 224;
/// the bound leaves room for float32 rounding of the normalisation only). JPEG is decoded by zune-jpeg, not
/// libjpeg-turbo: its IDCT, chroma upsampling and YCbCr conversion round differently, by up to 4 levels a sample
/// at full size on these files (mean 0.23 to 0.30 levels; 15 to 21 % of samples differ, nearly all by 1 or 2);
/// the resize averages that to at most 2 or 3 levels at 64 px and 3 or 4 at 224. CMYK: zune-jpeg's
/// conversion against Pillow's rounded `(255 - C)(255 - K) / 255`, 1 level on 0.6 % of samples.
fn bound(stem: &str) -> f32 {
    match stem {
        "photo" | "exif-rotated" | "panorama" => 4.0 + 1e-3,
        "cmyk" => 1.0 + 1e-3,
        _ => 1e-3,
    }
}

#[test]
fn crops_match_transformers() {
    for (stem, clip, siglip) in compare(&fixtures().join("crops")) {
        assert!(clip <= bound(&stem) && siglip <= bound(&stem), "{stem}: clip {clip}, siglip {siglip} levels apart");
    }
}

/// The same at the real checkpoints' sizes (224), from `make_crops.py --real OUT` (uncommitted):
/// `UFORM_CROPS_224=OUT cargo test -p uform-core --lib pixels -- --ignored --nocapture`.
#[test]
#[ignore]
fn real_size_crops() {
    let dir = std::env::var("UFORM_CROPS_224").expect("UFORM_CROPS_224 names make_crops.py --real's folder");
    for (stem, clip, siglip) in compare(Path::new(&dir)) {
        assert!(clip <= bound(&stem) && siglip <= bound(&stem), "{stem}: clip {clip}, siglip {siglip} levels apart");
    }
}

fn clip64() -> Preprocess {
    Preprocess::read(&fixtures().join("crops/clip/preprocessor_config.json")).unwrap()
}

/// The error `pixels` gives `bytes` as `images[3]`.
fn refusal(bytes: &[u8]) -> Error {
    let mut out = vec![0f32; 3 * 64 * 64];
    let e = clip64().pixels(bytes, 3, &mut out).expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().starts_with("`images[3]` "), "{e}");
    e
}

fn hostile(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("hostile").join(name)).unwrap()
}

#[test]
fn hostile_files_are_invalid_arguments() {
    let empty = refusal(&[]).message();
    assert!(empty.contains("is empty"), "{empty}");
    let text = refusal(&hostile("not-an-image.bin")).message();
    assert!(text.contains("is not an image"), "{text}");
    let truncated = refusal(&hostile("truncated.jpg")).message();
    assert!(truncated.contains("truncated JPEG"), "{truncated}");
    for (name, format) in [("animated.gif", "GIF"), ("animated.webp", "WebP"), ("animated.png", "PNG")] {
        let animated = refusal(&hostile(name)).message();
        assert!(animated.contains(&format!("is an animated {format}")), "{name}: {animated}");
    }
    let bmp = refusal(b"BM\x36\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00").message();
    assert!(bmp.contains("is a BMP image"), "{bmp}");
}

#[test]
fn a_bomb_is_refused_from_its_header() {
    let started = std::time::Instant::now();
    let bomb = refusal(&hostile("bomb.png")).message();
    assert!(bomb.contains("100000 x 100000") && bomb.contains(&format!("budget of {MAX_PIXELS} pixels")), "{bomb}");
    assert!(bomb.contains("refused before decoding"), "{bomb}");
    // 30 GB of pixels were neither allocated nor zeroed.
    assert!(started.elapsed().as_secs_f64() < 1.0);
    // A JPEG whose header declares 65,000 x 65,000 (over the budget; zune-jpeg alone would allocate it).
    let mut jpeg = std::fs::read(fixtures().join("files/photo.jpg")).unwrap();
    let sof = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).expect("a baseline SOF0");
    jpeg[sof + 5..sof + 9].copy_from_slice(&[0xFD, 0xE8, 0xFD, 0xE8]);
    let big = refusal(&jpeg).message();
    assert!(big.contains("65000 x 65000") && big.contains("budget"), "{big}");
}

/// Every committed file cut short is refused (never a panic, never the grey a lenient decoder fills in) where
/// Pillow refuses it too: everywhere but, for a PNG, in its last 12 bytes (`IEND`, which Pillow does not need).
#[test]
fn every_file_truncated_is_refused() {
    for file in files() {
        let bytes = std::fs::read(&file).unwrap();
        let n = bytes.len();
        let png = file.extension().is_some_and(|e| e == "png");
        for cut in [0, 1, 8, 30, n / 4, n / 2, n * 9 / 10, n - 1] {
            let mut out = vec![0f32; 3 * 64 * 64];
            match clip64().pixels(&bytes[..cut], 3, &mut out) {
                Ok(()) => assert!(png && cut >= n - 12, "{} cut at {cut} of {n} bytes decoded", file.display()),
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
                    assert!(!e.message().contains("the decoder failed"), "{} cut at {cut}: {e}", file.display());
                }
            }
        }
    }
}

#[test]
fn exif_orientation_and_cmyk() {
    let upright = decode(&std::fs::read(fixtures().join("files/exif-rotated.jpg")).unwrap(), 0).unwrap();
    assert_eq!((upright.width, upright.height), (300, 400));
    let cmyk = decode(&std::fs::read(fixtures().join("files/cmyk.jpg")).unwrap(), 0).unwrap();
    assert_eq!((cmyk.width, cmyk.height), (320, 240));
    // The picture's red disc (230, 40, ~) at (0.6 w, 0.4 h) survives the CMYK round trip within JPEG's error.
    let at = (96 * 320 + 192) * 3;
    let (r, g) = (cmyk.data[at], cmyk.data[at + 1]);
    assert!(r > 200 && g < 80, "{:?}", &cmyk.data[at..at + 3]);
}

#[test]
fn configs_read_and_refuse() {
    let clip = clip64();
    assert_eq!(clip.side(), (64, 64));
    assert_eq!(clip.resize, Some((Resize::ShortestEdge(64), Filter::Bicubic)));
    assert_eq!(clip.crop, Some((64, 64)));
    let siglip = Preprocess::read(&fixtures().join("crops/siglip")).unwrap();
    assert_eq!(siglip.side(), (64, 64));
    assert_eq!(siglip.crop, None);
    assert_eq!(siglip.normalize, Some(([0.5; 3], [0.5; 3])));
    let refuse = |json: &str| Preprocess::from_json(&serde_json::from_str(json).unwrap()).unwrap_err();
    let lanczos = refuse(r#"{"image_processor_type": "CLIPImageProcessor", "resample": 1}"#);
    assert!(lanczos.contains("`resample` is 1"), "{lanczos}");
    let other = refuse(r#"{"image_processor_type": "ViTImageProcessor"}"#);
    assert!(other.contains("\"ViTImageProcessor\""), "{other}");
    let pad = refuse(r#"{"image_processor_type": "SiglipImageProcessor", "do_pad": true}"#);
    assert!(pad.contains("`do_pad`"), "{pad}");
    let varying = refuse(r#"{"image_processor_type": "CLIPImageProcessor", "do_center_crop": false}"#);
    assert!(varying.contains("output's height and width"), "{varying}");
    let bilinear = Preprocess::from_json(
        &serde_json::json!({"image_processor_type": "SiglipImageProcessor", "resample": 2, "size": 32}),
    )
    .unwrap();
    assert_eq!(bilinear.resize, Some((Resize::Exact(32, 32), Filter::Bilinear)));
    let missing = Preprocess::read(&fixtures().join("files")).unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::Unsupported);
}

#[test]
fn a_crop_larger_than_the_image_pads_with_zeros() {
    // transformers: a 5-row image in a 8-row crop sits at row ceil(3 / 2) = 2.
    assert_eq!((offset(5, 8), offset(8, 5), offset(9, 4)), (-2, 1, 2));
    let processor = Preprocess { resize: None, crop: Some((8, 9)), rescale: Some(1.0 / 255.0), normalize: None };
    let tiny = std::fs::read(fixtures().join("files/tiny.png")).unwrap();
    let mut out = vec![f32::NAN; 3 * 8 * 9];
    processor.pixels(&tiny, 0, &mut out).unwrap();
    assert_eq!(out[0], 0.0);
    assert!(out[2 * 9 + 1] > 0.0 || out[2 * 9 + 2] > 0.0);
    assert_eq!(shortest_edge(480, 640, 224), (224, 298));
    assert_eq!(shortest_edge(100, 1000, 64), (64, 640));
    assert_eq!(shortest_edge(5, 7, 64), (64, 89));
}
