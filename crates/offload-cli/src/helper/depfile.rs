//! The Make depfile `offload-build compile --depfile` writes, with each file name spelled
//! as GNU make and Ninja both read it.

use super::failure::Failure;

/// A file name as a depfile must spell it for GNU make and Ninja alike (clang's escaping):
/// a space is `\ ` with the backslashes before it doubled, `#` is `\#`, `$` is `$$`, any
/// other byte (a backslash too) is itself. Names that the two read differently, or cannot
/// hold, are refused with an error naming the file: a line break (one rule per line), a
/// trailing backslash (it would escape the separator), a backslash before `#`.
fn depfile_name(path: &str, depfile: &str) -> Result<String, Failure> {
    let refuse = |why: &str| {
        Failure::Message(format!(
            "'{}': {why} cannot be written to the depfile '{depfile}' (GNU make and Ninja \
             would read another name); rename the file",
            path.escape_debug()
        ))
    };
    if path.contains(['\n', '\r']) {
        return Err(refuse("a file name with a line break"));
    }
    if path.ends_with('\\') {
        return Err(refuse("a file name ending with a backslash"));
    }
    if path.contains("\\#") {
        return Err(refuse("a file name with a backslash before '#'"));
    }
    let mut out = String::with_capacity(path.len() + 8);
    let mut backslashes = 0;
    for c in path.chars() {
        match c {
            ' ' => {
                // 2N+1 backslashes and a space are N backslashes and a space.
                out.extend(std::iter::repeat_n('\\', backslashes + 1));
                out.push(' ');
            }
            '#' => out.push_str("\\#"),
            '$' => out.push_str("$$"),
            _ => out.push(c),
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    Ok(out)
}

/// The depfile `compile --depfile` writes: `output` depends on every file the build read
/// (`deps`, from `rerun_paths` in `compile.rs`).
pub(crate) fn depfile_text(output: &str, depfile: &str, deps: &[&str]) -> Result<String, Failure> {
    let mut text = depfile_name(output, depfile)?;
    text.push(':');
    for d in deps {
        text.push_str(" \\\n  ");
        text.push_str(&depfile_name(d, depfile)?);
    }
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depfile_names_are_escaped_for_make_and_ninja() {
        let name = |p: &str| match depfile_name(p, "k.d") {
            Ok(s) => s,
            Err(Failure::Message(m)) => format!("error: {m}"),
            Err(Failure::BrokenPipe) => "broken pipe".into(),
        };
        assert_eq!(name("my k.hip"), "my\\ k.hip");
        assert_eq!(name("a\\ b.h"), "a\\\\\\ b.h");
        assert_eq!(name("a\\b.h"), "a\\b.h");
        assert_eq!(name("x#y$z"), "x\\#y$$z");
        for bad in ["a\nb", "a\\", "a\\#b"] {
            assert!(name(bad).starts_with("error: '"), "{bad:?}: {}", name(bad));
        }
        assert_eq!(
            name("x\ny"),
            "error: 'x\\ny': a file name with a line break cannot be written to the depfile \
             'k.d' (GNU make and Ninja would read another name); rename the file"
        );
    }
}
