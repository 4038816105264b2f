//! The environment's tuning knobs: read, validated and logged once, here only.
//!
//! Every `C2P_*` variable the library reads is listed in [`KNOBS`]. A value
//! that does not parse or is out of range is an error naming the variable
//! (returned by the first call that needs the configuration: a parameters
//! load or a proof), never a silent default. docs/operating.md says what
//! each one is for.

use crate::error::{Error, Result};
use once_cell::sync::OnceCell;

/// Whether a parameter set's points live on the GPU. `Auto` (the default)
/// keeps them there when the GPU's memory holds them and the proving work
/// beside them, and otherwise streams them; `Always` uploads them whatever
/// the free memory says (a failed upload still streams); `Never` streams
/// them from host memory for every MSM. Options that say `Auto` defer to
/// `C2P_PARAMS_ON_GPU`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Residency {
    #[default]
    Auto,
    Always,
    Never,
}

impl Residency {
    /// The choice in effect: an explicit one, or the environment's
    /// (`C2P_PARAMS_ON_GPU`; a malformed value was refused by `get` before
    /// any proof or load got here).
    pub fn resolve(self) -> Residency {
        if self != Residency::Auto {
            return self;
        }
        get().map_or(Residency::Auto, |c| c.params_on_gpu)
    }
}

/// The GPU side's tuning, as the CUDA code takes it (the layout of
/// `c2p_tuning` in cuda/include/c2p_cuda.h); 0 means the built-in choice.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuTuning {
    /// Bytes (MiB) the device memory pool keeps after frees.
    pub pool_keep_mib: u32,
    /// Host threads per staging copy.
    pub stage_threads: u32,
    /// Device memory (MiB) for one MSM window group's sort buffers.
    pub msm_group_mib: u32,
    /// The widest G1 MSM window, in bits.
    pub msm_g1_max_window: u32,
    /// The shortest chunk of the MSM bucket sums, in points.
    pub msm_min_chunk: u32,
    /// Elements per NTT shared-memory tile, log2.
    pub ntt_tile_log: u32,
}

/// The knobs in effect.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// `C2P_PARAMS_ON_GPU`: auto, always (or 1), never (or 0).
    pub params_on_gpu: Residency,
    /// `C2P_HOST_BUDGET`: bytes for jobs in flight (K, M, G, T suffixes).
    pub host_budget: Option<usize>,
    /// `C2P_DEVICE_BUDGET`: bytes of device memory per GPU for the library.
    pub device_budget: Option<usize>,
    /// `FIL_PROOFS_PARAMETER_CACHE` (filecoin-proofs' own): where the PoRep
    /// C2 job finds parameters and verifying keys unless told.
    pub filecoin_parameter_cache: Option<std::path::PathBuf>,
    pub gpu: GpuTuning,
}

/// Each knob: its variable and what it sets, for the log and the docs.
pub const KNOBS: [(&str, &str); 9] = [
    (
        "C2P_PARAMS_ON_GPU",
        "auto | always | never: parameters resident on the GPU or streamed",
    ),
    (
        "C2P_HOST_BUDGET",
        "bytes (K/M/G/T) of host memory for jobs in flight; default half of RAM",
    ),
    (
        "C2P_DEVICE_BUDGET",
        "bytes (K/M/G/T) of device memory per GPU; default its memory less max(1 GiB, 1/32)",
    ),
    (
        "C2P_POOL_KEEP_MIB",
        "1..=1048576: MiB the device memory pool keeps; default an eighth of the budget",
    ),
    (
        "C2P_STAGE_THREADS",
        "1..=64: host threads per staging copy; default min(16, cores)",
    ),
    (
        "C2P_MSM_GROUP_MIB",
        "512..=65536: MiB for an MSM window group's sorts; default budget/16 in 256 MiB..8 GiB",
    ),
    (
        "C2P_MSM_G1_MAX_WINDOW",
        "16..=22: widest G1 window; default 22 with a budget of 64 GiB or more, else 20",
    ),
    (
        "C2P_MSM_MIN_CHUNK",
        "16..=1024: shortest bucket-sum chunk; default 128",
    ),
    (
        "C2P_NTT_TILE_LOG",
        "7..=11: log2 of the NTT's shared-memory tile; default 11",
    ),
];

/// The configuration from the environment, read on the first call.
pub fn get() -> Result<&'static Config> {
    static CONFIG: OnceCell<Result<Config>> = OnceCell::new();
    CONFIG
        .get_or_init(|| {
            let config = from_lookup(|name| std::env::var(name).ok())?;
            for (name, _) in KNOBS {
                if let Ok(value) = std::env::var(name) {
                    log::info!("{name}={value}");
                }
            }
            Ok(config)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The configuration from `lookup` (the environment, or a test's table).
pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Config> {
    let number = |name: &str, range: std::ops::RangeInclusive<u32>| -> Result<u32> {
        let Some(text) = lookup(name) else { return Ok(0) };
        match text.trim().parse::<u32>() {
            Ok(n) if range.contains(&n) => Ok(n),
            _ => Err(Error::invalid(format!(
                "{name}={text:?}: expected a whole number in {}..={}",
                range.start(),
                range.end()
            ))),
        }
    };
    let params_on_gpu = match lookup("C2P_PARAMS_ON_GPU").as_deref().map(str::trim) {
        None | Some("auto") => Residency::Auto,
        Some("always") | Some("1") => Residency::Always,
        Some("never") | Some("0") => Residency::Never,
        Some(other) => {
            return Err(Error::invalid(format!(
                "C2P_PARAMS_ON_GPU={other:?}: expected auto, always or never"
            )))
        }
    };
    let size = |name: &str| -> Result<Option<usize>> {
        let Some(text) = lookup(name) else { return Ok(None) };
        match parse_bytes(&text) {
            Some(bytes) if bytes > 0 => Ok(Some(bytes)),
            _ => Err(Error::invalid(format!(
                "{name}={text:?}: expected a size in bytes such as 68719476736, 64G or 512M"
            ))),
        }
    };
    let host_budget = size("C2P_HOST_BUDGET")?;
    let device_budget = size("C2P_DEVICE_BUDGET")?;
    let filecoin_parameter_cache = lookup("FIL_PROOFS_PARAMETER_CACHE")
        .filter(|dir| !dir.is_empty())
        .map(std::path::PathBuf::from);
    Ok(Config {
        params_on_gpu,
        host_budget,
        device_budget,
        filecoin_parameter_cache,
        gpu: GpuTuning {
            pool_keep_mib: number("C2P_POOL_KEEP_MIB", 1..=1 << 20)?,
            stage_threads: number("C2P_STAGE_THREADS", 1..=64)?,
            msm_group_mib: number("C2P_MSM_GROUP_MIB", 512..=65536)?,
            msm_g1_max_window: number("C2P_MSM_G1_MAX_WINDOW", 16..=22)?,
            msm_min_chunk: number("C2P_MSM_MIN_CHUNK", 16..=1024)?,
            ntt_tile_log: number("C2P_NTT_TILE_LOG", 7..=11)?,
        },
    })
}

/// "123", "64K", "512M", "100G", "1T" (powers of 1024) as bytes.
pub fn parse_bytes(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last()? {
        (i, 'K' | 'k') => (&text[..i], 10),
        (i, 'M' | 'm') => (&text[..i], 20),
        (i, 'G' | 'g') => (&text[..i], 30),
        (i, 'T' | 't') => (&text[..i], 40),
        _ => (text, 0),
    };
    digits.trim().parse::<usize>().ok()?.checked_mul(1usize << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<Config> {
        from_lookup(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn nothing_set_is_the_defaults() {
        assert_eq!(with(&[]).unwrap(), Config::default());
    }

    #[test]
    fn values_in_range_are_taken() {
        let c = with(&[
            ("C2P_PARAMS_ON_GPU", "never"),
            ("C2P_HOST_BUDGET", "64G"),
            ("C2P_DEVICE_BUDGET", "16G"),
            ("C2P_MSM_MIN_CHUNK", "256"),
            ("C2P_NTT_TILE_LOG", "9"),
            ("C2P_STAGE_THREADS", "4"),
        ])
        .unwrap();
        assert_eq!(c.params_on_gpu, Residency::Never);
        assert_eq!(c.host_budget, Some(64 << 30));
        assert_eq!(c.device_budget, Some(16 << 30));
        assert_eq!(c.gpu.msm_min_chunk, 256);
        assert_eq!(c.gpu.ntt_tile_log, 9);
        assert_eq!(c.gpu.stage_threads, 4);
        assert_eq!(c.gpu.msm_group_mib, 0);
    }

    #[test]
    fn a_malformed_value_is_an_error_naming_the_variable() {
        for (name, value) in [
            ("C2P_PARAMS_ON_GPU", "sometimes"),
            ("C2P_HOST_BUDGET", "lots"),
            ("C2P_HOST_BUDGET", "0"),
            ("C2P_DEVICE_BUDGET", "16Q"),
            ("C2P_MSM_MIN_CHUNK", "8"),
            ("C2P_MSM_MIN_CHUNK", "x"),
            ("C2P_NTT_TILE_LOG", "12"),
            ("C2P_MSM_G1_MAX_WINDOW", "23"),
            ("C2P_MSM_GROUP_MIB", "100"),
            ("C2P_POOL_KEEP_MIB", "-1"),
            ("C2P_STAGE_THREADS", "0"),
        ] {
            let err = with(&[(name, value)]).unwrap_err();
            assert_eq!(err.kind, crate::ErrorKind::InvalidArgument, "{name}={value}");
            assert!(err.message.starts_with(name), "{name}={value}: {}", err.message);
        }
    }

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_bytes("123"), Some(123));
        assert_eq!(parse_bytes("64K"), Some(64 << 10));
        assert_eq!(parse_bytes(" 512m "), Some(512 << 20));
        assert_eq!(parse_bytes("1T"), Some(1 << 40));
        assert_eq!(parse_bytes("G"), None);
        assert_eq!(parse_bytes("-1"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(parse_bytes("12Q"), None);
    }
}
