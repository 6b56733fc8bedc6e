//! Hub names: a model's source that is not a file or folder here, but a Hugging Face Hub repository name
//! (`org/name` or `name`), resolved through the cache that `huggingface_hub`, transformers and sentence-transformers
//! share, so a model any of them downloaded loads with no second copy.
//!
//! The cache folder is `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else
//! `~/.cache/huggingface/hub` (`huggingface_hub`'s order; its older `$HUGGINGFACE_HUB_CACHE` is read after
//! `$HF_HUB_CACHE`). A repository `org/name` lives in `models--org--name/`: `refs/<revision>` holds the commit a
//! branch or tag points at, and `snapshots/<commit>/` the files of that commit (links into `blobs/`, which the
//! loader follows). A revision of 40 hexadecimal digits names a commit directly.
//!
//! A source that exists as a file or folder is always that file or folder, so `./name` or an absolute path picks a
//! folder that a Hub name would shadow. Only what the cache holds is read: nothing is downloaded.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// The revision an absent `revision` means, as on the Hub.
pub const DEFAULT_REVISION: &str = "main";

/// The folder or file to load for `source`: `source` itself when it exists (or does not look like a Hub name), else
/// the cached snapshot of the Hub repository it names at `revision` (absent: `main`).
pub fn resolve(source: &str, revision: Option<&str>) -> Result<PathBuf> {
    let path = Path::new(source);
    if path.exists() {
        // A revision only means something for a name: refused rather than ignored.
        return match revision {
            Some(revision) => Err(Error::invalid_argument(
                "config.revision",
                format!("`{revision}` names a Hub revision, but `{source}` is a file or folder here: leave it out"),
            )),
            None => Ok(path.to_path_buf()),
        };
    }
    match repository_name(source) {
        // The loader's I/O error names the missing path.
        Err(_) if revision.is_none() => Ok(path.to_path_buf()),
        Err(why) => Err(Error::invalid_argument(
            "path",
            format!("`{source}` is no file or folder here, and no Hub name: {why}"),
        )),
        Ok(()) => {
            let revision = revision.unwrap_or(DEFAULT_REVISION);
            check_revision(revision)?;
            snapshot(&cache_folder()?, source, revision)
        }
    }
}

/// The Hub cache folder, from the environment (see the module documentation). A leading `~/` in a variable is the
/// home folder, as `huggingface_hub` expands it.
pub fn cache_folder() -> Result<PathBuf> {
    cache_folder_from(|name| std::env::var_os(name))
}

/// [`cache_folder`] with the environment read through `variable`.
fn cache_folder_from(variable: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<PathBuf> {
    let home = variable("HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
    let set = |name: &str| {
        let value = PathBuf::from(variable(name).filter(|v| !v.is_empty())?);
        Some(match (value.strip_prefix("~"), &home) {
            (Ok(rest), Some(home)) => home.join(rest),
            _ => value,
        })
    };
    if let Some(hub) = set("HF_HUB_CACHE").or_else(|| set("HUGGINGFACE_HUB_CACHE")) {
        return Ok(hub);
    }
    if let Some(home) = set("HF_HOME") {
        return Ok(home.join("hub"));
    }
    let cache = set("XDG_CACHE_HOME").or_else(|| home.as_ref().map(|home| home.join(".cache")));
    cache.map(|c| c.join("huggingface/hub")).ok_or_else(|| {
        Error::unavailable("no Hugging Face cache folder: set HF_HUB_CACHE or HF_HOME (HOME is not set either)")
    })
}

/// Checks `source` as `huggingface_hub` checks a repository id: `name` or `org/name`, each part of letters, digits,
/// `-`, `_` and `.`, not starting or ending with `-` or `.`, the name at most 96 characters, no `--` or `..`.
fn repository_name(source: &str) -> std::result::Result<(), String> {
    let parts: Vec<&str> = source.split('/').collect();
    if parts.len() > 2 {
        return Err("a Hub name is `name` or `org/name`".into());
    }
    for part in &parts {
        let allowed = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
        if part.is_empty() || !part.chars().all(allowed) {
            return Err(format!("`{part}` may hold only letters, digits, `-`, `_` and `.`"));
        }
        if part.starts_with(['-', '.']) || part.ends_with(['-', '.']) {
            return Err(format!("`{part}` may not start or end with `-` or `.`"));
        }
    }
    if source.contains("--") || source.contains("..") {
        return Err("a Hub name holds no `--` or `..`".into());
    }
    if parts.last().is_some_and(|name| name.chars().count() > 96) {
        return Err("a Hub name is at most 96 characters".into());
    }
    Ok(())
}

/// A revision names a ref file under `refs/` or a commit: no empty, `.` or `..` part, no backslash or NUL, so it
/// can never name a file outside the repository's cache folder.
fn check_revision(revision: &str) -> Result<()> {
    let bad_part = revision.split('/').any(|part| part.is_empty() || part == "." || part == "..");
    if bad_part || revision.contains(['\\', '\0']) {
        return Err(Error::invalid_argument(
            "config.revision",
            format!("`{revision}` is no branch, tag or commit: its parts must be non-empty and not `.` or `..`"),
        ));
    }
    Ok(())
}

fn is_commit(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The snapshot folder of `name` at `revision` in `cache`.
fn snapshot(cache: &Path, name: &str, revision: &str) -> Result<PathBuf> {
    let repository = cache.join(format!("models--{}", name.replace('/', "--")));
    let missing = |what: String| {
        Error::unavailable(format!(
            "`{name}` is no file or folder here, and the Hugging Face cache ({}) {what}; this version reads models \
             from that cache but does not download them: fetch it with `huggingface-cli download {name}` (or \
             huggingface_hub's snapshot_download; sentence-transformers and transformers fill the same cache), \
             or pass a folder",
            cache.display()
        ))
    };
    let commit = if is_commit(revision) && repository.join("snapshots").join(revision).is_dir() {
        revision.to_string()
    } else {
        let reference = repository.join("refs").join(revision);
        match std::fs::read_to_string(&reference) {
            Ok(text) if is_commit(text.trim()) => text.trim().to_string(),
            Ok(_) => {
                return Err(Error::invalid_argument(
                    "path",
                    format!("the cache's ref `{}` holds no commit hash", reference.display()),
                ))
            }
            Err(_) if repository.is_dir() => return Err(missing(format!("holds no revision `{revision}` of it"))),
            Err(_) => return Err(missing("does not hold it".into())),
        }
    };
    let folder = repository.join("snapshots").join(&commit);
    if !folder.is_dir() {
        return Err(missing(format!("names commit {commit} for `{revision}` but holds no snapshot of it")));
    }
    only_pickled_weights(&folder)?;
    Ok(folder)
}

/// A snapshot with PyTorch's pickled weights and no safetensors is unsupported, naming the file: UForm never
/// unpickles (a pickle can run code).
fn only_pickled_weights(folder: &Path) -> Result<()> {
    let names: Vec<String> = std::fs::read_dir(folder)
        .map(|entries| entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    // `model.safetensors`, its shards, or their index `model.safetensors.index.json`.
    let safetensors = names.iter().any(|n| n.ends_with(".safetensors") || n.ends_with(".safetensors.index.json"));
    let sentence_transformers = folder.join("modules.json").is_file();
    match names.iter().find(|n| n.as_str() == "pytorch_model.bin" || n.as_str() == "pytorch_model.bin.index.json") {
        Some(pickled) if !safetensors && !sentence_transformers => Err(Error::unsupported(format!(
            "`{}` holds its weights only as `{pickled}`, PyTorch's pickle format, which UForm never reads (unpickling \
             can run code): pick a revision or repository with `model.safetensors`, or convert it",
            folder.display()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn names_follow_the_hubs_rules() {
        for good in ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5", "a_b/c.d"]
        {
            assert_eq!(repository_name(good), Ok(()), "{good}");
        }
        for bad in ["", "/abs", "a/b/c", "../x", "org/..", "a--b/c", "-a/b", "a/b.", "a b/c", "a/b\\c", "./x"] {
            assert!(repository_name(bad).is_err(), "{bad}");
        }
        assert!(repository_name(&"x".repeat(97)).is_err());
    }

    #[test]
    fn revisions_never_leave_the_repository() {
        for good in ["main", "v1.0", "refs/pr/1", "0123456789abcdef0123456789abcdef01234567"] {
            assert!(check_revision(good).is_ok(), "{good}");
        }
        for bad in ["", "..", "../../etc", "a/../b", "/abs", "a//b", "a\\b", "a\0b", "main/"] {
            assert!(check_revision(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_existing_path_is_never_a_name() {
        let dir = std::env::temp_dir();
        let text = dir.to_str().unwrap();
        assert_eq!(resolve(text, None).unwrap(), dir);
        // Not a name and not there: returned as is, for the loader's I/O error naming it.
        assert_eq!(resolve("./no/such/folder", None).unwrap(), Path::new("./no/such/folder"));
        assert_eq!(resolve(text, Some("main")).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(resolve("./no/such/folder", Some("main")).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn the_cache_folder_follows_huggingface_hubs_order() {
        let folder = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            cache_folder_from(|name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.into()))
        };
        let all = [("HF_HUB_CACHE", "/a"), ("HUGGINGFACE_HUB_CACHE", "/b"), ("HF_HOME", "/c"), ("HOME", "/h")];
        assert_eq!(folder(&all).unwrap(), Path::new("/a"));
        assert_eq!(folder(&all[1..]).unwrap(), Path::new("/b"));
        assert_eq!(folder(&all[2..]).unwrap(), Path::new("/c/hub"));
        assert_eq!(folder(&all[3..]).unwrap(), Path::new("/h/.cache/huggingface/hub"));
        assert_eq!(folder(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]).unwrap(), Path::new("/x/huggingface/hub"));
        assert_eq!(folder(&[("HF_HOME", "~/hf"), ("HOME", "/h")]).unwrap(), Path::new("/h/hf/hub"));
        assert_eq!(folder(&[("HF_HUB_CACHE", ""), ("HOME", "/h")]).unwrap(), Path::new("/h/.cache/huggingface/hub"));
        assert_eq!(folder(&[]).unwrap_err().kind(), ErrorKind::Unavailable);
    }

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    /// A cache holding `org/model` at COMMIT, `main` and the tag `v1` pointing at it, its files `names`.
    fn cache(names: &[&str]) -> PathBuf {
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let cache = std::env::temp_dir().join(format!("uform-hub-test-{}-{n}", std::process::id()));
        let repository = cache.join("models--org--model");
        let snapshot = repository.join("snapshots").join(COMMIT);
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::create_dir_all(repository.join("refs")).unwrap();
        std::fs::write(repository.join("refs/main"), COMMIT).unwrap();
        std::fs::write(repository.join("refs/v1"), format!("{COMMIT}\n")).unwrap();
        for name in names {
            std::fs::write(snapshot.join(name), b"{}").unwrap();
        }
        cache
    }

    #[test]
    fn a_name_resolves_to_the_snapshot_of_its_revision() {
        let cache = cache(&["model.safetensors", "config.json"]);
        let expected = cache.join("models--org--model/snapshots").join(COMMIT);
        for revision in ["main", "v1", COMMIT] {
            assert_eq!(snapshot(&cache, "org/model", revision).unwrap(), expected, "{revision}");
        }
        let absent = snapshot(&cache, "org/model", "v2").unwrap_err();
        assert_eq!(absent.kind(), ErrorKind::Unavailable);
        assert!(absent.message().contains("holds no revision `v2`"), "{absent}");
        let uncached = snapshot(&cache, "org/other", "main").unwrap_err();
        assert_eq!(uncached.kind(), ErrorKind::Unavailable);
        assert!(uncached.message().contains(&cache.display().to_string()), "names the cache: {uncached}");
        assert!(uncached.message().contains("huggingface-cli download org/other"), "{uncached}");
        std::fs::write(cache.join("models--org--model/refs/main"), "../../../etc").unwrap();
        assert_eq!(snapshot(&cache, "org/model", "main").unwrap_err().kind(), ErrorKind::InvalidArgument);
        std::fs::remove_dir_all(cache).unwrap();
    }

    #[test]
    fn pickled_weights_alone_are_unsupported() {
        let cache = cache(&["pytorch_model.bin", "config.json"]);
        let e = snapshot(&cache, "org/model", "main").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(e.message().contains("`pytorch_model.bin`"), "{e}");
        std::fs::write(cache.join("models--org--model/snapshots").join(COMMIT).join("model.safetensors"), b"").unwrap();
        assert!(snapshot(&cache, "org/model", "main").is_ok());
        std::fs::remove_dir_all(cache).unwrap();
    }
}
