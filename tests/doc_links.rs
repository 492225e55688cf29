//! Every relative link of `README.md` and `docs/*.md` points at a file or folder of the tree,
//! and every `#anchor` (alone or after a `.md` path) at a heading of that page, as GitHub
//! renders it. Links inside code (fenced blocks, `inline code`) are not links and are skipped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every `docs/*.md`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ folder")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The page's lines outside fenced code blocks, with inline code spans blanked out.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut in_fence = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut prose = String::new();
        for (k, part) in line.split('`').enumerate() {
            // Even parts are outside backticks; odd ones are code.
            prose.push_str(if k % 2 == 0 { part } else { " " });
        }
        out.push((i + 1, prose));
    }
    out
}

/// The targets of the `[text](target)` links of one line.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    targets
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
fn anchor_of(heading: &str) -> String {
    let text: String = heading.chars().filter(|&c| c != '`').collect();
    text.trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(page: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let mut in_fence = false;
    let mut set = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            set.insert(anchor_of(line.trim_start_matches('#')));
        }
    }
    set
}

/// What is wrong with one link of `page`, if anything.
fn check_link(page: &Path, target: &str) -> Option<String> {
    let external = ["http://", "https://", "mailto:"];
    if target.is_empty() || external.iter().any(|p| target.starts_with(p)) {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() { page.to_path_buf() } else { page.parent().unwrap().join(path) };
    if !file.exists() {
        return Some(format!("`{target}`: no file {}", file.display()));
    }
    match anchor {
        Some(anchor) if file.extension().is_some_and(|e| e == "md") && !anchors(&file).contains(anchor) => {
            Some(format!("`{target}`: no heading with anchor `#{anchor}` in {}", file.display()))
        }
        _ => None,
    }
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for (line_no, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                checked += 1;
                if let Some(problem) = check_link(&page, &target) {
                    broken.push(format!("{}:{line_no}: {problem}", page.display()));
                }
            }
        }
    }
    assert!(checked >= 10, "found only {checked} links: the link reader lost its way");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_reader_finds_links_anchors_and_skips_code() {
    assert_eq!(link_targets("see [a](docs/a.md) and [b](#b-c)."), ["docs/a.md", "#b-c"]);
    let lines = prose_lines("x [a](a.md) `[no](no.md)`\n```\n[no](no.md)\n```\n[b](b.md)\n");
    let found: Vec<String> = lines.iter().flat_map(|(_, l)| link_targets(l)).collect();
    assert_eq!(found, ["a.md", "b.md"]);
    assert_eq!(anchor_of(" Conditional nodes: `[[while]]` and `[[if]]`"), "conditional-nodes-while-and-if");
    assert_eq!(anchor_of(" Capture and cudarc's event tracking"), "capture-and-cudarcs-event-tracking");
    let page = root().join("README.md");
    assert!(check_link(&page, "docs/no-such-page.md").is_some());
    assert!(check_link(&page, "docs/safety.md#no-such-heading").is_some());
    assert!(check_link(&page, "https://example.invalid/x").is_none());
}
