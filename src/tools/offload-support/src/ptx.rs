//! The directives of a PTX module that the tools check: its ISA and target, the kernels it
//! defines (`.entry`), and the device functions it defines or only declares (`.extern .func`).

/// The directives of a PTX module.
#[derive(Debug, Default, PartialEq)]
pub struct Summary {
    /// `.version 7.8`
    pub version: Option<(u32, u32)>,
    /// `.target sm_90` (the first target; `, debug` and the like dropped).
    pub target: Option<String>,
    /// `.entry <name>`: kernels.
    pub entries: Vec<String>,
    /// `.func <name>` defined or declared here, not `.extern`.
    pub funcs: Vec<String>,
    /// `.extern .func <name>`: called but not defined.
    pub extern_funcs: Vec<String>,
}

/// The directives of the PTX text `ptx`, each list sorted, without repeats; comments (`//`)
/// are not read.
pub fn summarize(ptx: &str) -> Summary {
    let mut s = Summary::default();
    for line in ptx.lines() {
        let line = line.split("//").next().unwrap_or_default();
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [".version", v, ..] => {
                s.version = v
                    .split_once('.')
                    .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
            }
            [".target", t, ..] => s.target = Some(t.trim_end_matches(',').to_owned()),
            _ => {}
        }
        let Some(kind) = words.iter().position(|w| *w == ".entry" || *w == ".func") else {
            continue;
        };
        let Some(name) = symbol_after(&words[kind + 1..]) else { continue };
        if words[kind] == ".entry" {
            s.entries.push(name);
        } else if words[..kind].contains(&".extern") {
            s.extern_funcs.push(name);
        } else {
            s.funcs.push(name);
        }
    }
    for names in [&mut s.entries, &mut s.funcs, &mut s.extern_funcs] {
        names.sort();
        names.dedup();
    }
    s
}

/// The symbol of `.entry`/`.func` from the words after it, past a return-value group
/// (`.func (.param .b32 func_retval0) vprintf(`).
fn symbol_after(words: &[&str]) -> Option<String> {
    let mut words = words.iter();
    let mut word = *words.next()?;
    if word.starts_with('(') {
        while !word.ends_with(')') {
            word = words.next()?;
        }
        word = words.next()?;
    }
    let name = word.split('(').next().unwrap_or_default().trim_end_matches(';');
    (!name.is_empty()).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_the_kernels() {
        let ptx = "//\n// .entry commented(\n.version 7.8\n.target sm_90, debug\n\
                   .visible .entry saxpy(\n\t.param .u64 saxpy_param_0\n)\n{\n}\n\
                   .visible .entry empty()\n{\n}\n.visible .func helper(\n";
        let s = summarize(ptx);
        assert_eq!(s.version, Some((7, 8)));
        assert_eq!(s.target.as_deref(), Some("sm_90"));
        assert_eq!(s.entries, ["empty", "saxpy"]);
        assert_eq!(s.funcs, ["helper"]);
    }

    #[test]
    fn a_return_value_group_is_not_the_name() {
        let ptx = ".extern .func  (.param .b32 func_retval0) vprintf\n(\n)\n;\n\
                   .extern .func malloc(\n);\n.visible .entry k;\n";
        let s = summarize(ptx);
        assert_eq!(s.extern_funcs, ["malloc", "vprintf"]);
        assert_eq!(s.entries, ["k"]);
        assert!(s.funcs.is_empty());
    }
}
