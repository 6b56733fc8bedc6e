//! `cargo xtask install --prefix DIR`: the C library as a system package would lay it out — the header, the shared
//! and static libraries, a pkg-config file and a CMake package config.

use crate::util::{cargo, root};
use std::path::{Path, PathBuf};

/// System libraries the static library needs, as `cargo rustc --print native-static-libs` lists them here.
const STATIC_DEPENDENCIES: &str = "-lhwloc -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc";

pub fn run(args: &[String]) -> Result<(), String> {
    let prefix = match args {
        [flag, dir] if flag == "--prefix" => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask install --prefix DIR [--debug]".into()),
    };
    install(&prefix, "release")
}

/// Builds libuform with `profile` and installs it under `prefix`.
pub fn install(prefix: &Path, profile: &str) -> Result<(), String> {
    let prefix = if prefix.is_absolute() {
        prefix.to_path_buf()
    } else {
        std::env::current_dir().map_err(|e| e.to_string())?.join(prefix)
    };
    let mut build = vec!["build", "--quiet", "-p", "uform-c"];
    if profile == "release" {
        build.push("--release");
    }
    cargo(&build)?;
    let built = root().join("target").join(if profile == "release" { "release" } else { "debug" });
    let (include, lib) = (prefix.join("include"), prefix.join("lib"));
    let (pkgconfig, cmake) = (lib.join("pkgconfig"), lib.join("cmake/uform"));
    for dir in [&include, &lib, &pkgconfig, &cmake] {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let copy = |from: PathBuf, to: PathBuf| {
        std::fs::copy(&from, &to)
            .map(|_| ())
            .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
    };
    copy(root().join("generated/c/uform.h"), include.join("uform.h"))?;
    copy(built.join("libuform.so"), lib.join("libuform.so"))?;
    copy(built.join("libuform.a"), lib.join("libuform.a"))?;
    let version = env!("CARGO_PKG_VERSION");
    let pc = format!(
        "prefix={}\nexec_prefix=${{prefix}}\nlibdir=${{prefix}}/lib\nincludedir=${{prefix}}/include\n\n\
         Name: uform\nDescription: The UForm runtime: executors, meshes and devices for models on CPUs and GPUs\n\
         Version: {version}\nLibs: -L${{libdir}} -luform\nLibs.private: {STATIC_DEPENDENCIES}\nCflags: -I${{includedir}}\n",
        prefix.display()
    );
    std::fs::write(pkgconfig.join("uform.pc"), pc).map_err(|e| e.to_string())?;
    let config = format!(
        "# CMake package config for UForm: find_package(uform) gives the imported target uform::uform.\n\
         get_filename_component(_uform_prefix \"${{CMAKE_CURRENT_LIST_DIR}}/../../..\" ABSOLUTE)\n\
         if(NOT TARGET uform::uform)\n  \
           add_library(uform::uform SHARED IMPORTED)\n  \
           set_target_properties(uform::uform PROPERTIES\n    \
             IMPORTED_LOCATION \"${{_uform_prefix}}/lib/libuform.so\"\n    \
             INTERFACE_INCLUDE_DIRECTORIES \"${{_uform_prefix}}/include\")\n\
         endif()\n\
         if(NOT TARGET uform::uform_static)\n  \
           add_library(uform::uform_static STATIC IMPORTED)\n  \
           set_target_properties(uform::uform_static PROPERTIES\n    \
             IMPORTED_LOCATION \"${{_uform_prefix}}/lib/libuform.a\"\n    \
             INTERFACE_INCLUDE_DIRECTORIES \"${{_uform_prefix}}/include\"\n    \
             INTERFACE_LINK_LIBRARIES \"{STATIC_DEPENDENCIES}\")\n\
         endif()\n\
         set(uform_VERSION {version})\nset(uform_FOUND TRUE)\n"
    );
    std::fs::write(cmake.join("uformConfig.cmake"), config).map_err(|e| e.to_string())?;
    let version_file = format!(
        "set(PACKAGE_VERSION {version})\n\
         if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)\n  set(PACKAGE_VERSION_COMPATIBLE FALSE)\n\
         else()\n  set(PACKAGE_VERSION_COMPATIBLE TRUE)\n  \
           if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n    set(PACKAGE_VERSION_EXACT TRUE)\n  endif()\nendif()\n"
    );
    std::fs::write(cmake.join("uformConfigVersion.cmake"), version_file).map_err(|e| e.to_string())?;
    eprintln!("installed uform {version} into {}", prefix.display());
    Ok(())
}
