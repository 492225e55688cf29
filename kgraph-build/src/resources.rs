//! ptxas' resource report (`-Xptxas=-v`), parsed per kernel.

/// What ptxas reported for one kernel entry on one arch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// Kernel (entry function) name as ptxas prints it.
    pub kernel: String,
    /// Target arch, e.g. `sm_90`.
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Local-memory stack frame in bytes.
    pub stack_frame: u32,
    /// Bytes of register spill stores.
    pub spill_stores: u32,
    /// Bytes of register spill loads.
    pub spill_loads: u32,
    /// Bytes of static shared memory (`__shared__` arrays; dynamic shared memory is a launch
    /// parameter, not in the report).
    pub shared: u32,
}

impl KernelResources {
    /// True when the kernel spills or uses a local-memory stack frame (slow local memory).
    pub fn uses_local_memory(&self) -> bool {
        self.stack_frame > 0 || self.spill_stores > 0 || self.spill_loads > 0
    }

    /// One line of the report file.
    pub fn line(&self) -> String {
        format!(
            "{} {}: {} registers, {} bytes stack frame, {} bytes spill stores, {} bytes spill loads",
            self.kernel, self.arch, self.registers, self.stack_frame, self.spill_stores, self.spill_loads
        )
    }
}

fn number_before(line: &str, unit: &str) -> Option<u32> {
    let head = &line[..line.find(unit)?];
    head.split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty())?.parse().ok()
}

fn quoted(line: &str, nth: usize) -> Option<String> {
    line.split('\'').nth(2 * nth + 1).map(str::to_string)
}

/// Parses ptxas' `-v` output. Unknown lines are ignored, so a newer ptxas degrades to fewer fields.
pub fn parse(ptxas_stderr: &str) -> Vec<KernelResources> {
    let mut out: Vec<KernelResources> = Vec::new();
    for line in ptxas_stderr.lines() {
        if line.contains("Compiling entry function") {
            out.push(KernelResources {
                kernel: quoted(line, 0).unwrap_or_default(),
                arch: quoted(line, 1).unwrap_or_default(),
                ..Default::default()
            });
        } else if let Some(k) = out.last_mut() {
            if line.contains("stack frame") {
                k.stack_frame = number_before(line, "bytes stack frame").unwrap_or(0);
                k.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
                k.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
            } else if line.contains("Used") && line.contains("registers") {
                k.registers = number_before(line, "registers").unwrap_or(0);
                k.shared = number_before(line, "bytes smem").unwrap_or(0);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'axpb' for 'sm_90'
ptxas info    : Function properties for axpb
    256 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem, 372 bytes cmem[0]
ptxas info    : Compiling entry function 'noop' for 'sm_90'
ptxas info    : Function properties for noop
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 4 registers, used 0 barriers
";

    #[test]
    fn parses_each_entry_function() {
        let r = parse(REPORT);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            KernelResources {
                kernel: "axpb".into(),
                arch: "sm_90".into(),
                registers: 32,
                stack_frame: 256,
                spill_stores: 8,
                spill_loads: 12,
                shared: 1024,
            }
        );
        assert!(r[0].uses_local_memory());
        assert_eq!(r[1].registers, 4);
        assert_eq!(r[1].shared, 0);
        assert!(!r[1].uses_local_memory());
    }

    #[test]
    fn garbage_gives_nothing() {
        assert!(parse("error: something\nUsed registers").is_empty());
    }
}
