//! `--out DIR`: a complete Swift package that needs only a Swift toolchain (6.2 or later):
//!
//! ```text
//! DIR/Package.swift               the bundle by path      DIR/Package.released.swift   by URL and checksum
//! DIR/UFormNative.artifactbundle  DIR/UFormNative.artifactbundle.zip{,.sha256}
//! DIR/Sources/UForm/*.swift       DIR/Sources/UFormBench/main.swift   DIR/Tests/UFormTests/*.swift
//! DIR/Consumer/                   a user's package depending on DIR through `file://DIR`, from the version
//! DIR/TestModel/                  the test model, the reference embeddings, the training fixture, the family
//!                                 checkpoints and the image fixture (untracked) for the encode, trainer, family
//!                                 and image tests
//! ```
//!
//! DIR becomes a git repository whose one commit is tagged with the IDL's version, so the consumer's dependency is
//! versioned, as users' dependencies are. `cd DIR && swift build && swift test && (cd Consumer && swift run)`.

use super::manifests;
use super::{copy, write, Packaged, BUNDLE, CHECKSUM_SUFFIX};
use crate::util::{root, run_in};
use std::path::Path;

/// Marks a folder this command wrote, so a second run may replace it (and never anything else).
const MARKER: &str = ".uform-swift-package";

pub fn write_folder(out: &Path, packaged: &Packaged) -> Result<(), String> {
    let root = root();
    if out.exists() {
        let empty = std::fs::read_dir(out).map_err(|e| e.to_string())?.next().is_none();
        if out.join(MARKER).exists() {
            std::fs::remove_dir_all(out).map_err(|e| format!("cannot remove {}: {e}", out.display()))?;
        } else if !empty {
            return Err(format!("{} exists and was not written by this command: choose another --out", out.display()));
        }
    }
    write(&out.join(MARKER), "written by `cargo xtask package swift --out`; a second run replaces this folder\n")?;
    copy_tree(&packaged.bundle, &out.join(BUNDLE))?;
    let zip_name = format!("{BUNDLE}.zip");
    copy(&packaged.zip, &out.join(&zip_name))?;
    write(&out.join(format!("{zip_name}{CHECKSUM_SUFFIX}")), &format!("{}\n", packaged.checksum))?;
    write(&out.join("Package.swift"), &manifests::folder())?;
    copy(&packaged.released_manifest, &out.join("Package.released.swift"))?;
    copy_tree(&root.join("generated/swift/Sources/UForm"), &out.join("Sources/UForm"))?;
    copy_tree(&root.join("bindings/swift/Sources/UFormBench"), &out.join("Sources/UFormBench"))?;
    copy_tree(&root.join("bindings/swift/Tests/UFormTests"), &out.join("Tests/UFormTests"))?;
    // The encode scenarios' model and reference, where the tests look when UFORM_TEST_MODEL_DIR is unset: beside
    // the package, untracked (88 MB of weights stay out of the tagged commit the consumer clones).
    copy_tree(&crate::util::test_model_dir()?, &out.join("TestModel/model"))?;
    copy(&root.join("tests/fixtures/encode/reference.json"), &out.join("TestModel/reference.json"))?;
    copy(&root.join("tests/fixtures/train/reference.json"), &out.join("TestModel/train-reference.json"))?;
    copy_tree(&root.join("tests/fixtures/families"), &out.join("TestModel/families"))?;
    // The image scenarios' checkpoints, images and reference (not the scripts that made them).
    let images = root.join("tests/fixtures/images");
    for name in ["clip", "clip-vision", "siglip", "files", "crops", "hostile"] {
        copy_tree(&images.join(name), &out.join("TestModel/images").join(name))?;
    }
    copy(&images.join("reference.json"), &out.join("TestModel/images/reference.json"))?;
    let url = format!("file://{}", out.display());
    let identity = out.file_name().map(|n| n.to_string_lossy().to_lowercase()).ok_or("--out names no folder")?;
    write(&out.join("Consumer/Package.swift"), &manifests::consumer(&url, &identity, &packaged.version))?;
    write(&out.join("Consumer/Sources/Consumer/main.swift"), manifests::CONSUMER_MAIN)?;
    write(
        &out.join(".gitignore"),
        ".build/\n.swiftpm/\nConsumer/.build/\nConsumer/.swiftpm/\nConsumer/Package.resolved\nTestModel/\n",
    )?;
    write(&out.join("README.md"), &readme(&packaged.version))?;
    let git = |args: &[&str]| {
        let mut all =
            vec!["-c", "user.name=uform xtask", "-c", "user.email=xtask@uform.invalid", "-c", "commit.gpgsign=false"];
        all.extend_from_slice(args);
        run_in(out, "git", &all)
    };
    git(&["init", "--quiet", "--initial-branch=main"])?;
    git(&["add", "--all"])?;
    git(&["commit", "--quiet", "--message", &format!("UForm {} for Swift", packaged.version)])?;
    git(&["tag", &packaged.version])?;
    Ok(())
}

fn readme(version: &str) -> String {
    format!(
        "# UForm {version} for Swift\n\n\
         A self-contained Swift package written by `cargo xtask package swift --out DIR`: the generated Swift, the\n\
         static-library artifact bundle `{BUNDLE}` (with its zip and SwiftPM checksum), the scenario tests, the\n\
         overhead benchmark and a consumer package. Needs a Swift 6.2+ toolchain and, on Linux, hwloc's development\n\
         package (`libhwloc-dev`): the module map links `hwloc`. No Rust.\n\n\
         ```sh\nswift build && swift test && (cd Consumer && swift run)\n\
         swift run -c release uform-swift-bench   # the overhead row\n```\n\n\
         `Package.released.swift` is the manifest a release publishes: the bundle's zip by URL and checksum.\n"
    )
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    for entry in std::fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?.flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else {
            copy(&path, &target)?;
        }
    }
    Ok(())
}
