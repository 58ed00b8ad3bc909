//! What the OS says about the machine: host name, processor, caches, memory.
//!
//! Linux only (`/proc`, `/sys`); elsewhere every figure is simply unknown and the sweep's
//! plateaus alone place the memory levels. Parsing is split from reading so it can be tested on
//! fixed text.

use std::fs;

/// One cache as `/sys/devices/system/cpu/cpuN/cache/indexM/` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheEntry {
    /// Level: 1, 2, 3 (4 on a few chips).
    pub level: u8,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size of one instance, bytes.
    pub size: u64,
    /// The logical CPUs sharing this instance (its identity), as the OS lists them (`0-1`).
    pub shared_cpu_list: String,
}

/// A data (or unified) cache level, summed over the instances a set of CPUs uses.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheLevel {
    /// Level: 1, 2, 3.
    pub level: u8,
    /// Size of one instance, bytes.
    pub instance_size: u64,
    /// Distinct instances the CPUs use.
    pub instances: u32,
    /// `instance_size × instances`: what the threads can use together, bytes.
    pub capacity: f64,
}

/// The machine as the OS describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostInfo {
    /// Host name (`/proc/sys/kernel/hostname`), or `unknown`.
    pub hostname: String,
    /// Processor model (`model name` in `/proc/cpuinfo`), or `unknown CPU`.
    pub model: String,
    /// Vendor (`AMD`, `Intel`, or the raw `vendor_id`), or empty.
    pub vendor: String,
    /// CPUID family and model (`cpu family`, `model` in `/proc/cpuinfo`), where given.
    pub family_model: Option<(u32, u32)>,
    /// Total memory, bytes (`MemTotal`).
    pub mem_total: Option<f64>,
    /// Memory available for new allocations without swapping, bytes (`MemAvailable`).
    pub mem_available: Option<f64>,
    /// The frequency the OS names, Hz, and where it says so ([`parse_nominal_hz`]): shown beside
    /// the measured clock, never used in its place.
    pub nominal_hz: Option<(f64, String)>,
}

/// Reads [`HostInfo`]; missing files leave figures unknown.
pub fn host_info() -> HostInfo {
    let hostname = fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let (model, vendor) = parse_cpuinfo(&cpuinfo);
    HostInfo {
        hostname,
        model,
        vendor,
        family_model: parse_family_model(&cpuinfo),
        mem_total: parse_meminfo(&meminfo, "MemTotal"),
        mem_available: parse_meminfo(&meminfo, "MemAvailable"),
        nominal_hz: parse_nominal_hz(
            &cpuinfo,
            fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
                .ok()
                .as_deref(),
        ),
    }
}

/// The frequency the OS names for the processor, Hz, with its source: the `@ 2.00GHz` of an
/// Intel model name (the base frequency), else cpufreq's `cpuinfo_max_freq` (kHz: the highest
/// the driver allows, turbo included), else the first `cpu MHz` of `/proc/cpuinfo` (in a VM
/// usually the TSC's frequency, not the core's). `None` when none is there or it is not a
/// positive number.
pub fn parse_nominal_hz(cpuinfo: &str, max_freq_khz: Option<&str>) -> Option<(f64, String)> {
    let field = |name: &str| {
        cpuinfo
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == name)
            .map(|(_, v)| v.trim().to_string())
    };
    let positive = |v: f64| (v.is_finite() && v > 0.0).then_some(v);
    if let Some(model) = field("model name") {
        if let Some((_, tail)) = model.rsplit_once('@') {
            let tail = tail.trim();
            if let Some(ghz) = tail.strip_suffix("GHz").and_then(|g| g.trim().parse().ok()) {
                if let Some(v) = positive(ghz) {
                    return Some((v * 1e9, "the model name's base frequency".into()));
                }
            }
        }
    }
    if let Some(khz) = max_freq_khz.and_then(|k| k.trim().parse::<f64>().ok()) {
        if let Some(v) = positive(khz) {
            return Some((v * 1e3, "cpufreq's cpuinfo_max_freq".into()));
        }
    }
    let mhz = field("cpu MHz")?.parse::<f64>().ok()?;
    positive(mhz).map(|v| (v * 1e6, "/proc/cpuinfo's cpu MHz".into()))
}

/// Model name and vendor from `/proc/cpuinfo` text.
pub fn parse_cpuinfo(text: &str) -> (String, String) {
    let field = |name: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == name)
            .map(|(_, v)| v.trim().to_string())
    };
    let model = field("model name").unwrap_or_else(|| "unknown CPU".into());
    let vendor = match field("vendor_id").as_deref() {
        Some("AuthenticAMD") => "AMD".to_string(),
        Some("GenuineIntel") => "Intel".to_string(),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    (model, vendor)
}

/// CPUID family and model of the first CPU in `/proc/cpuinfo` text (decimal there).
pub fn parse_family_model(text: &str) -> Option<(u32, u32)> {
    let field = |name: &str| {
        text.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim() == name)
            .and_then(|(_, v)| v.trim().parse::<u32>().ok())
    };
    Some((field("cpu family")?, field("model")?))
}

/// A `/proc/meminfo` field in bytes (the file gives kB = 1024 bytes).
pub fn parse_meminfo(text: &str, field: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with(&format!("{field}:")))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

/// A cache size as sysfs writes it (`32K`, `8192K`, `64M`), in bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1024 * 1024),
        'G' | 'g' => (&s[..s.len() - 1], 1024 * 1024 * 1024),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok().map(|v| v * mult)
}

/// The caches of logical CPU `cpu` from sysfs (empty where there is no sysfs).
pub fn caches_of_cpu(cpu: usize) -> Vec<CacheEntry> {
    let mut out = Vec::new();
    for index in 0..16 {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache/index{index}");
        let read = |f: &str| fs::read_to_string(format!("{dir}/{f}")).ok();
        let Some(level) = read("level").and_then(|s| s.trim().parse::<u8>().ok()) else {
            if index > 4 {
                break;
            }
            continue;
        };
        let (Some(kind), Some(size)) = (read("type"), read("size").and_then(|s| parse_size(&s)))
        else {
            continue;
        };
        out.push(CacheEntry {
            level,
            kind: kind.trim().to_string(),
            size,
            shared_cpu_list: read("shared_cpu_list")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|| format!("cpu{cpu}")),
        });
    }
    out
}

/// Data-cache levels used by a set of CPUs: per level, the distinct instances (by
/// `shared_cpu_list`) among `entries` (the caches of each CPU, concatenated), summed.
/// Instruction caches are left out. Sorted by level.
pub fn cache_levels(entries: &[CacheEntry]) -> Vec<CacheLevel> {
    let mut levels: Vec<CacheLevel> = Vec::new();
    let mut seen: Vec<(u8, &str)> = Vec::new();
    for e in entries.iter().filter(|e| e.kind != "Instruction") {
        if seen.contains(&(e.level, e.shared_cpu_list.as_str())) {
            continue;
        }
        seen.push((e.level, e.shared_cpu_list.as_str()));
        match levels.iter_mut().find(|l| l.level == e.level) {
            Some(l) => {
                l.instances += 1;
                l.capacity += e.size as f64;
                l.instance_size = l.instance_size.max(e.size);
            }
            None => levels.push(CacheLevel {
                level: e.level,
                instance_size: e.size,
                instances: 1,
                capacity: e.size as f64,
            }),
        }
    }
    levels.sort_by_key(|l| l.level);
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(level: u8, kind: &str, size: u64, shared: &str) -> CacheEntry {
        CacheEntry {
            level,
            kind: kind.into(),
            size,
            shared_cpu_list: shared.into(),
        }
    }

    #[test]
    fn sizes_as_sysfs_writes_them() {
        assert_eq!(parse_size("32K\n"), Some(32 * 1024));
        assert_eq!(parse_size("8192K"), Some(8 * 1024 * 1024));
        assert_eq!(parse_size("64M"), Some(64 * 1024 * 1024));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn private_caches_add_up_shared_ones_count_once() {
        // Two CPUs: private 32 KiB L1d and 512 KiB L2 each, one 8 MiB L3 shared by both, and
        // L1i caches that must be ignored.
        let e = vec![
            entry(1, "Data", 32768, "0"),
            entry(1, "Instruction", 65536, "0"),
            entry(2, "Unified", 524288, "0"),
            entry(3, "Unified", 8388608, "0-1"),
            entry(1, "Data", 32768, "1"),
            entry(1, "Instruction", 65536, "1"),
            entry(2, "Unified", 524288, "1"),
            entry(3, "Unified", 8388608, "0-1"),
        ];
        let l = cache_levels(&e);
        assert_eq!(l.len(), 3);
        assert_eq!((l[0].level, l[0].instances, l[0].capacity), (1, 2, 65536.0));
        assert_eq!(
            (l[1].level, l[1].instances, l[1].capacity),
            (2, 2, 1048576.0)
        );
        assert_eq!(
            (l[2].level, l[2].instances, l[2].capacity),
            (3, 1, 8388608.0)
        );
    }

    #[test]
    fn nominal_frequency_where_the_os_names_one() {
        let intel =
            "model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.00GHz\ncpu MHz\t\t: 2000.000\n";
        assert_eq!(
            parse_nominal_hz(intel, Some("3800000")).map(|(v, _)| v),
            Some(2.0e9)
        );
        let amd = "model name\t: AMD EPYC\ncpu MHz\t\t: 2596.136\n";
        assert_eq!(
            parse_nominal_hz(amd, Some("3700000\n")).map(|(v, _)| v),
            Some(3.7e9)
        );
        let (v, src) = parse_nominal_hz(amd, None).unwrap_or_default();
        assert!((v - 2.596136e9).abs() < 1.0, "{v}");
        assert!(src.contains("cpu MHz"));
        assert_eq!(parse_nominal_hz("model name: x\ncpu MHz: 0\n", None), None);
        assert_eq!(parse_nominal_hz("", Some("junk")), None);
    }

    #[test]
    fn cpuinfo_and_meminfo() {
        let cpu =
            "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t: fma\n";
        assert_eq!(parse_cpuinfo(cpu), ("AMD EPYC".into(), "AMD".into()));
        let cpu2 =
            "vendor_id\t: AuthenticAMD\ncpu family\t: 23\nmodel\t\t: 1\nmodel name\t: AMD EPYC\n";
        // `model` must not be confused with `model name`.
        assert_eq!(parse_family_model(cpu2), Some((23, 1)));
        assert_eq!(parse_family_model(cpu), None);
        assert_eq!(parse_cpuinfo(""), ("unknown CPU".into(), String::new()));
        let mem = "MemTotal:       24683656 kB\nMemFree:        19885888 kB\n";
        // 24683656 kB × 1024 = 25276063744 bytes.
        assert_eq!(parse_meminfo(mem, "MemTotal"), Some(25_276_063_744.0));
        assert_eq!(parse_meminfo(mem, "MemAvailable"), None);
    }
}
