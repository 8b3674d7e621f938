//! One rustdoc source page (`src/core/bool.rs.html`) turned back into the Rust file it shows.
//!
//! The page names the file in its description ("Source of the Rust file `library/core/src/bool.rs`.")
//! and holds it in `<pre class="rust"><code>`: every line starts with a line-number anchor
//! `<a href=#N id=N data-nosnippet>N</a>`, the rest is the source with highlighting tags
//! (`<span class="kw">`, links) around HTML-escaped text.

use anyhow::{Context, Result, bail, ensure};

const PATH_START: &str = "Source of the Rust file `";
const PATH_END: &str = "`";
const CODE_START: &str = "<pre class=\"rust\"><code>";
const CODE_END: &str = "</code></pre>";

/// A Rust file as a rustdoc source page shows it.
#[derive(Debug)]
pub(crate) struct SourcePage {
    /// The path the page names, as rustdoc wrote it, e.g. `library/core/src/../../stdarch/...`.
    pub(crate) path: String,
    /// The file's text, as many lines long as the page numbers.
    pub(crate) text: String,
}

/// Extracts the file a rustdoc source page shows and checks it has the page's line count.
pub(crate) fn parse(html: &str) -> Result<SourcePage> {
    let path = between(html, PATH_START, PATH_END)
        .context("no \"Source of the Rust file\" description: not a rustdoc source page")?;
    let code =
        between(html, CODE_START, CODE_END).context("no `<pre class=\"rust\"><code>` block")?;

    let fragments: Vec<&str> = code.split('\n').collect();
    let mut text = String::with_capacity(code.len() / 2);
    let mut lines = 0;
    for (index, fragment) in fragments.iter().enumerate() {
        let number = index + 1;
        let anchor = format!("<a href=#{number} id={number} data-nosnippet>{number}</a>");
        if let Some(line) = fragment.strip_prefix(&anchor) {
            if index > 0 {
                text.push('\n');
            }
            html_escape::decode_html_entities_to_string(strip_tags(line), &mut text);
            lines = number;
        } else if index > 0 && index + 1 == fragments.len() && strip_tags(fragment).is_empty() {
            // What follows the last newline: only closing tags, so the file ends with a newline.
            text.push('\n');
        } else if !(fragments.len() == 1 && fragment.is_empty()) {
            bail!("line {number} does not start with its line-number anchor");
        }
    }

    let counted = text.lines().count();
    ensure!(counted == lines, "extracted {counted} lines, but the page numbers {lines}");
    Ok(SourcePage { path: path.to_owned(), text })
}

/// The text between the first `start` and the `end` after it.
fn between<'a>(haystack: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = haystack.find(start)? + start.len();
    let len = haystack[from..].find(end)?;
    Some(&haystack[from..from + len])
}

/// `line` without its tags; text stays HTML-escaped, so no `<` or `>` is part of it.
fn strip_tags(line: &str) -> String {
    let mut text = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        rest = rest[open..].find('>').map_or("", |close| &rest[open + close + 1..]);
    }
    text.push_str(rest);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page shaped like rustdoc's: head, then numbered, highlighted, escaped lines.
    const PAGE: &str = r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="description" content="Source of the Rust file `library/core/src/../../stdarch/demo.rs`."><title>demo.rs - source</title></head><body class="rustdoc src"><main><div class="example-wrap digits-1"><pre class="rust"><code><a href=#1 id=1 data-nosnippet>1</a><span class="doccomment">//! Tom &amp; Jerry: &lt;T&gt; is &quot;generic&quot;, &#39;a is a lifetime
<a href=#2 id=2 data-nosnippet>2</a>
<a href=#3 id=3 data-nosnippet>3</a></span><span class="kw">pub fn </span><a href="../../core/fn.f.html">f</a>&lt;<span class="lifetime">&#39;a</span>&gt;(x: <span class="kw-2">&amp;</span><span class="lifetime">&#39;a </span>str) -&gt; bool {
<a href=#4 id=4 data-nosnippet>4</a>    x == <span class="string">"&lt;/code&gt;"
<a href=#5 id=5 data-nosnippet>5</a></span>}
</code></pre></div></main></body></html>"#;

    const SOURCE: &str = r#"//! Tom & Jerry: <T> is "generic", 'a is a lifetime

pub fn f<'a>(x: &'a str) -> bool {
    x == "</code>"
}
"#;

    #[test]
    fn extracts_the_file_a_page_shows() {
        let page = parse(PAGE).unwrap();
        assert_eq!(page.path, "library/core/src/../../stdarch/demo.rs");
        assert_eq!(page.text, SOURCE);
        assert_eq!(page.text.lines().count(), 5);
    }

    #[test]
    fn keeps_a_missing_final_newline_missing() {
        let page = parse(&PAGE.replace("}\n</code>", "}</code>")).unwrap();
        assert_eq!(page.text, SOURCE.trim_end_matches('\n'));
        assert_eq!(page.text.lines().count(), 5);
    }

    #[test]
    fn rejects_a_line_without_its_number() {
        let broken = PAGE.replace("<a href=#4 id=4 data-nosnippet>4</a>", "");
        let error = parse(&broken).unwrap_err().to_string();
        assert_eq!(error, "line 4 does not start with its line-number anchor");
    }

    #[test]
    fn rejects_a_page_that_is_not_a_source_page() {
        assert!(parse("<html><body>settings</body></html>").is_err());
    }
}
