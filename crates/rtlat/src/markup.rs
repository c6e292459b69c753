//! Text inside markup: JUnit's XML and the evaluation's HTML page, each
//! character that would be read as markup written as an entity.

/// Text for XML or HTML content and double-quoted attributes: `& < > " '` as
/// entities, tabs and newlines as character references (attribute values
/// keep them then), other characters XML 1.0 forbids as U+FFFD.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_characters_become_entities() {
        assert_eq!(
            escape("a<b> & \"c\" 'd'\tx\u{1}"),
            "a&lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;&#9;x\u{fffd}"
        );
    }
}
