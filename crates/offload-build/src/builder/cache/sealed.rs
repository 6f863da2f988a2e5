//! The cache's tables (the stamp table, the scan table): a header line naming the table and
//! its version, the table's lines, then a last line with the hash of all the others
//! (`# <32 hex digits>`), so that a table damaged or cut short is not used at all.

use xxhash_rust::xxh3::xxh3_128;

/// `header`, then `body` (whole lines), then the line sealing them.
pub(crate) fn seal(header: &str, body: &str) -> String {
    let mut text = format!("{header}\n{body}");
    text.push_str(&format!("# {:032x}\n", xxh3_128(text.as_bytes())));
    text
}

/// The lines between `header` and the seal of a table [`seal`] wrote; `None` when the seal
/// does not hold or the header is another's.
pub(crate) fn unseal<'t>(header: &str, text: &'t str) -> Option<&'t str> {
    let (rest, last) = text.trim_end_matches('\n').rsplit_once('\n')?;
    let sum = u128::from_str_radix(last.strip_prefix("# ")?, 16).ok()?;
    (sum == xxh3_128(&text.as_bytes()[..=rest.len()])).then_some(())?;
    let (first, body) = rest.split_once('\n').unwrap_or((rest, ""));
    (first == header).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_table_opens_whole_and_not_when_damaged() {
        let text = seal("t 1", "a\nb\n");
        assert_eq!(unseal("t 1", &text), Some("a\nb"));
        assert_eq!(unseal("t 2", &text), None, "another table");
        assert_eq!(unseal("t 1", &seal("t 1", "")), Some(""));
        let mut damaged = text.clone().into_bytes();
        damaged[4] ^= 1;
        assert_eq!(unseal("t 1", std::str::from_utf8(&damaged).unwrap()), None);
        assert_eq!(unseal("t 1", &text[..text.len() - 3]), None, "cut short");
    }
}
