//! Where a crate's kgraph files are, found the way its build finds them: the crate root (the
//! nearest `Cargo.toml`), its kernel folders (`kernels/`, the folders its `build.rs` adds, the
//! ones the last build announced in `KGRAPH_KERNEL_DIRS`), and what the last build left in
//! `target/<profile>/build/<package>-<hash>/out/kgraph/` (cubins, records, ptxas reports).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use kgraph_codegen::Config;
use syn::visit::Visit;

use crate::args::CliError;

/// The crate root: `explicit` (`--root`), else the nearest folder at or above `start` that
/// has a `Cargo.toml`.
pub fn crate_root(explicit: Option<PathBuf>, start: &Path) -> Result<PathBuf, CliError> {
    if let Some(root) = explicit {
        if !root.join("Cargo.toml").is_file() {
            return Err(CliError::Failed(format!("`{}` has no Cargo.toml: pass a crate's folder", root.display())));
        }
        return Ok(absolute(&root));
    }
    let start = absolute(start);
    start.ancestors().find(|dir| dir.join("Cargo.toml").is_file()).map(Path::to_path_buf).ok_or_else(|| {
        CliError::Failed(format!(
            "no Cargo.toml in `{}` or above it: run kgraph inside a crate, or pass `--root DIR`",
            start.display()
        ))
    })
}

/// The folder kgraph runs in.
pub fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir().map_err(|e| CliError::Failed(format!("cannot read the current folder: {e}")))
}

/// `path` made absolute against the current folder (not resolving links, so messages show the
/// paths the user wrote).
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `path` relative to `root` when inside it, for messages (`graphs/x.toml`, as `graph!` names it).
pub fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// The `[package] name` of the crate's `Cargo.toml`.
fn package_name(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let manifest: toml::Table = toml::from_str(&text).ok()?;
    manifest.get("package")?.get("name")?.as_str().map(str::to_string)
}

/// Cargo's target folder: `explicit` (`--target-dir`), else `$CARGO_TARGET_DIR`, else the
/// nearest `target/` at or above the crate root (a workspace member builds into the
/// workspace's).
pub fn target_dir(root: &Path, explicit: Option<PathBuf>) -> Option<PathBuf> {
    if let Some(dir) = explicit.or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from)) {
        return Some(absolute(&dir));
    }
    root.ancestors().map(|dir| dir.join("target")).find(|dir| dir.is_dir())
}

/// What one run of the crate's build script left.
#[derive(Debug, Clone)]
pub struct BuildOutput {
    /// `$OUT_DIR/kgraph`: cubins, `<stem>.kernels`, `<stem>.i`, `<stem>.resources.txt`.
    pub kgraph_dir: PathBuf,
    /// The kernel folders the build compiled (its `KGRAPH_KERNEL_DIRS`).
    pub kernel_dirs: Vec<PathBuf>,
}

/// The most recent build output of the crate at `root` under `target` (any profile, any
/// target triple), if there is one.
pub fn latest_build(root: &Path, target: &Path) -> Option<BuildOutput> {
    let package = package_name(root)?;
    let mut profiles: Vec<PathBuf> = subdirs(target);
    // `target/<triple>/<profile>/` when building for an explicit `--target`.
    profiles.extend(subdirs(target).iter().flat_map(|d| subdirs(d)));
    let runs = profiles.iter().flat_map(|profile| subdirs(&profile.join("build"))).filter(|dir| {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name.strip_prefix(&package)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|hash| !hash.is_empty() && hash.chars().all(|c| c.is_ascii_hexdigit()))
            && dir.join("out/kgraph").is_dir()
    });
    let newest = runs.max_by_key(|dir| modified(&dir.join("output")).or_else(|| modified(&dir.join("out/kgraph"))))?;
    let announced = std::fs::read_to_string(newest.join("output")).unwrap_or_default();
    Some(BuildOutput { kgraph_dir: newest.join("out/kgraph"), kernel_dirs: announced_kernel_dirs(&announced) })
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The folders of `cargo:rustc-env=KGRAPH_KERNEL_DIRS=...` in a build script's output.
fn announced_kernel_dirs(output: &str) -> Vec<PathBuf> {
    let var = format!("{}=", kgraph_build::KERNEL_DIRS_ENV);
    output
        .lines()
        .filter_map(|line| line.strip_prefix("cargo:rustc-env=").or_else(|| line.strip_prefix("cargo::rustc-env=")))
        .filter_map(|assignment| assignment.strip_prefix(&var))
        .flat_map(std::env::split_paths)
        .collect()
}

/// The folders a `build.rs` adds with `.add_kernel_dir("...")` or `.kernel_dir("...")` string
/// literals: what the build will compile even before it has run once.
fn build_script_kernel_dirs(root: &Path) -> Vec<PathBuf> {
    #[derive(Default)]
    struct Calls(Vec<String>);
    impl<'ast> Visit<'ast> for Calls {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            if call.method == "add_kernel_dir" || call.method == "kernel_dir" {
                if let Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(dir), .. })) = call.args.first() {
                    self.0.push(dir.value());
                }
            }
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    let Some(file) = std::fs::read_to_string(root.join("build.rs")).ok().and_then(|t| syn::parse_file(&t).ok()) else {
        return Vec::new();
    };
    let mut calls = Calls::default();
    calls.visit_file(&file);
    calls.0.into_iter().map(PathBuf::from).collect()
}

/// Where `#[kernel("x.cu")]` finds `.cu` files for the crate at `root`, as the macros' own
/// [`Config::kernel_dirs_from`] orders them: `extra` (`--kernel-dir`), the build script's
/// folders, what `build` announced, then `kernels/`.
pub fn kernel_config(root: &Path, extra: &[PathBuf], build: Option<&BuildOutput>, records: Option<PathBuf>) -> Config {
    let mut dirs: Vec<PathBuf> = extra.iter().map(|d| absolute(d)).collect();
    dirs.extend(build_script_kernel_dirs(root));
    dirs.extend(build.map(|b| b.kernel_dirs.clone()).unwrap_or_default());
    let joined = std::env::join_paths(&dirs).ok();
    Config {
        kernel_dirs: Config::kernel_dirs_from(root, None, joined.as_deref()),
        manifest_dir: root.to_path_buf(),
        // A check embeds nothing: whether the crate has a build script is the compiler's concern.
        has_out_dir: true,
        record_dir: records,
    }
}

/// A kernel source edited since `build` recorded what nvcc compiled, if any: a `<stem>.cu`
/// newer than its `<stem>.kernels`, or a header newer than every record (a header edit
/// rebuilds the files that include it). Stale records would check declarations against old
/// signatures.
pub fn stale_source(build: &BuildOutput, config: &Config) -> Option<PathBuf> {
    let records = files_with_extension(&build.kgraph_dir, "kernels");
    let newest_record = records.iter().filter_map(|r| modified(r)).max()?;
    for dir in &config.kernel_dirs {
        for cu in files_with_extension(dir, "cu") {
            let stem = cu.file_stem().unwrap_or_default().to_string_lossy();
            let record = build.kgraph_dir.join(format!("{stem}.kernels"));
            if let (Some(source), Some(compiled)) = (modified(&cu), modified(&record)) {
                if source > compiled {
                    return Some(cu);
                }
            }
        }
        let headers = files_with_extension(dir, "cuh");
        if let Some(header) = headers.into_iter().find(|h| modified(h).is_some_and(|t| t > newest_record)) {
            return Some(header);
        }
    }
    None
}

/// Every file under `dir` (recursively) whose name ends with `.ext`, sorted.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for path in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_announced_kernel_dirs() {
        let output = "cargo:rerun-if-changed=kernels\ncargo:rustc-env=KGRAPH_KERNEL_DIRS=/a/kernels:/a/more\n";
        assert_eq!(announced_kernel_dirs(output), vec![PathBuf::from("/a/kernels"), PathBuf::from("/a/more")]);
        assert!(announced_kernel_dirs("cargo:warning=x").is_empty());
    }
}
