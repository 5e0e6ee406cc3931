//! Docusaurus MDX (v3) → MkDocs containers and CommonMark.
//!
//! An MDX page is Markdown with JavaScript in it: `import`/`export` statements,
//! JSX elements (`<Tabs>`, `<BrowserWindow>`) and `{expressions}`, plus
//! Docusaurus's own `:::note` admonitions. A CommonMark renderer shows all of it
//! as raw text, so this pass rewrites the page, outside fenced code and inline
//! code, into what Docusaurus would show:
//!
//! | syntax | becomes |
//! | --- | --- |
//! | `import … from '…';`, `export …` (also over several lines) | removed |
//! | ```` ```mdx-code-block ```` fences | their content, read as MDX (Docusaurus renders it) |
//! | `:::note`, `:::tip Title`, `:::info[Title]`, `::::` nesting, `:::my-type` | `!!! note "Title"` + indented body (`caution` → `warning` "Caution", `important` → `info` "Important") |
//! | `<Tabs>` + `<TabItem value="x" label="Label">` | one `=== "Label"` per item (label from `<Tabs values={…}>`, else `label`, else `value`) |
//! | `<Admonition type="tip" title="T">` | `!!! tip "T"` |
//! | `<details>` + `<summary>Text</summary>` | `??? note "Text"` (collapsed) |
//! | ```` ```js title="a.js" showLineNumbers {1,4-6} ```` | `*a.js*` caption line, then ```` ```js ```` |
//! | `` <CodeBlock language="js" title="a.js">{`code`}</CodeBlock> `` | caption + fenced block; computed code is left out (reported) |
//! | other `<Component …>` on lines of their own | the lines removed, children kept (reported once per name) |
//! | `<Highlight>text</Highlight>` inside running text | `text` (reported once per name) |
//! | `<DocCardList />`, `<TOCInline … />` (self-closing) | removed (reported once per name) |
//! | `{'<'}`, `{"text"}`, `` {`text`} `` string literals | their text |
//! | other `{expressions}` (`{frontMatter.title}`, `{/* comment */}`) | removed |
//! | `{#custom-id}` heading ids, `\{` escapes, `$math$` | kept |
//! | lower-case HTML (`<br/>`, `<div className="x">`) | kept (the renderer sanitises it); `prop={…}` attributes dropped |
//!
//! `<details>` becomes a `???` container rather than staying HTML: CommonMark
//! reads Markdown inside an HTML block only where blank lines separate it from
//! the tags, which MDX does not require, so lists and code inside `<details>`
//! would often stay raw text; a container renders them in both targets and gives
//! the search text the summary as its label.
//!
//! Tags are read as JSX reads them: attribute values in quotes or balanced
//! braces (`values={[{label: 'A'}]}` may hold `>`), over several lines. A line
//! of tags is replaced by an empty line, as MDX ends a paragraph there, and text
//! that followed a tag on its line is escaped where it would start a heading or
//! a list the source did not have. Containers are built as a tree of blocks
//! (`tree`, shared with Hugo), whose bodies are re-indented for MkDocs whatever the JSX
//! indentation was (MDX has no indented code blocks, so that indentation means
//! nothing).
//!
//! The pass's modules:
//!
//! | module | job |
//! | --- | --- |
//! | `esm` | ```` ```mdx-code-block ```` fences unwrapped, `import`/`export` statements removed |
//! | `scanner` | the page read as runs of lines, outside fenced code and math, into container items |
//! | `lines` | what is read line by line: `:::` admonitions, fence info strings, `$$` math |
//! | `tokens` | a run split into text, JSX tags (with their attributes) and `{expressions}` |
//! | `js` | JavaScript as far as the pass reads it: brackets, strings, templates, expressions |
//! | `components` | JSX components and their props: tabs, admonitions, `<CodeBlock>`, `<details>`, HTML |
//! | `assemble` | output lines built from a run's tokens |
//! | `tree` | the container tree the items are nested in and written from (shared with Hugo) |

mod assemble;
mod components;
mod esm;
mod js;
mod lines;
mod scanner;
mod tokens;
pub(crate) mod tree;

use std::collections::HashSet;

use crate::{Line, Notice};
use scanner::Scanner;

/// Translates one MDX page's lines.
pub fn translate(lines: Vec<Line>, notices: &mut Vec<Notice>) -> Vec<Line> {
    let lines = esm::remove_esm(esm::unwrap_mdx_code_blocks(lines));
    let mut scanner = Scanner { notices, reported: HashSet::new(), items: Vec::new(), open: Vec::new() };
    scanner.scan(&lines);
    let mut root = tree::build(scanner.items);
    components::title_details(&mut root);
    let mut out = Vec::with_capacity(lines.len());
    tree::emit(&root, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NoticeKind;

    fn run(md: &str) -> (Vec<Line>, Vec<Notice>) {
        let mut notices = Vec::new();
        let lines = md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect();
        let out = translate(lines, &mut notices);
        (out, notices)
    }

    fn text(md: &str) -> String {
        run(md).0.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    /// The page through the whole pipeline, for `target`.
    fn page(md: &str, target: crate::Target) -> crate::Normalized {
        let d = crate::Dialects { mkdocs: true, obsidian: false, gfm: false, mdx: true, hugo: false };
        crate::normalize(md, target, d, &crate::NoResolver)
    }

    #[test]
    fn imports_and_exports_go() {
        let md = "import Tabs from '@theme/Tabs';\nimport {\n  A,\n  B,\n} from 'x';\n\nexport const Highlight = ({children, color}) => (\n  <span style={{color}}>\n    {children}\n  </span>\n);\n\nimport the module yourself.\nText\n";
        assert_eq!(text(md), "\n\nimport the module yourself.\nText\n");
        let templ = "export const F = () => {\n  return <code>{`./v-${x}/`}</code>;\n}\nAfter\n";
        assert_eq!(text(templ), "After\n");
    }

    #[test]
    fn mdx_code_blocks_are_unwrapped_and_other_fences_kept() {
        let md = "```mdx-code-block\nimport X from 'y';\n\n<BrowserWindow>\n\nHello\n\n</BrowserWindow>\n```\n```jsx\nimport X from 'y';\n<Tabs>\n```\n";
        let (out, notices) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t.iter().filter(|l| l.contains("Hello")).count(), 1);
        assert!(!t.iter().any(|l| l.contains("BrowserWindow") || l.contains("mdx-code-block")));
        assert!(t.ends_with(&["```jsx", "import X from 'y';", "<Tabs>", "```"]), "{t:?}");
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].message, "`<BrowserWindow>` is not a component this build knows; its text was kept");
        assert_eq!(notices[0].line, 3);
    }

    #[test]
    fn admonitions_with_titles_and_nesting() {
        let md = ":::::info Parent\n\nParent content\n\n::::danger[Child **bold**]\n\nChild content\n\n:::tip\n\nDeep\n\n:::\n\n::::\n\n:::::\n\nAfter\n";
        let out = text(md);
        assert!(out.contains("!!! info \"Parent\"\n"), "{out}");
        assert!(out.contains("\n    !!! danger \"Child **bold**\"\n"), "{out}");
        assert!(out.contains("\n        !!! tip \"Tip\"\n\n            Deep\n"), "{out}");
        assert!(out.ends_with("\nAfter\n"), "{out}");
        let caution =
            text(":::caution\nCareful\n:::\n:::important[Read]\nx\n:::\n:::my-custom-admonition[My Title]\ny\n:::\n");
        assert!(caution.contains("!!! warning \"Caution\"\n    Careful\n"), "{caution}");
        assert!(caution.contains("!!! info \"Read\""), "{caution}");
        assert!(caution.contains("!!! my-custom-admonition \"My Title\""), "{caution}");
    }

    #[test]
    fn inner_closer_inside_longer_outer() {
        let out = text("::::note Outer\n:::tip\nIn\n:::\nStill outer\n::::\nOut\n");
        assert_eq!(out, "!!! note \"Outer\"\n\n    !!! tip \"Tip\"\n        In\n    Still outer\nOut\n");
    }

    #[test]
    fn tabs_become_mkdocs_tabs() {
        let md = "<Tabs>\n  <TabItem value=\"apple\" label=\"Apple\" default>\n    This is an apple 🍎\n  </TabItem>\n  <TabItem value=\"orange\">This is an orange</TabItem>\n</Tabs>\nAfter\n";
        let out = text(md);
        assert!(out.contains("=== \"Apple\"\n\n    This is an apple 🍎\n"), "{out}");
        assert!(out.contains("=== \"orange\"\n    This is an orange\n"), "{out}");
        assert!(out.ends_with("\nAfter\n"));
        assert!(!out.contains('<'), "{out}");
    }

    #[test]
    fn tab_labels_from_values_and_multi_line_props() {
        let md = "<Tabs\n  defaultValue=\"apple\"\n  values={[\n    {label: 'Apple 1', value: 'apple'},\n    {label: 'Orange > 1', value: 'orange'},\n  ]}>\n  <TabItem value=\"apple\" label=\"Apple 2\">A</TabItem>\n  <TabItem value=\"orange\" attributes={{className: styles.red}}>O</TabItem>\n</Tabs>\n";
        let out = text(md);
        assert!(out.contains("=== \"Apple 1\"\n    A\n"), "{out}");
        assert!(out.contains("=== \"Orange > 1\"\n    O\n"), "{out}");
        assert!(!out.contains("values") && !out.contains("styles"), "{out}");
    }

    #[test]
    fn tabs_in_admonitions_and_admonitions_in_tabs() {
        let md = ":::tip[Use tabs]\n\n<Tabs>\n  <TabItem value=\"a\" label=\"A\">\n\n:::note\n\nInside\n\n:::\n\n  </TabItem>\n</Tabs>\n\n:::\n";
        let out = text(md);
        assert!(out.contains("!!! tip \"Use tabs\"\n"), "{out}");
        assert!(out.contains("\n    === \"A\"\n"), "{out}");
        assert!(out.contains("\n        !!! note \"Note\"\n\n            Inside\n"), "{out}");
        let html = page(md, crate::Target::Html).text;
        assert!(html.contains("<section class=\"tab\">"), "{html}");
        assert!(html.contains("<aside class=\"admonition note\""), "{html}");
        assert!(html.contains("\nInside\n"), "{html}");
    }

    #[test]
    fn details_become_collapsed_containers() {
        let md = "<details>\n  <summary><code>Tabs</code> props take\n  precedence:</summary>\n\n- item\n\n```js\nx\n```\n\n</details>\n";
        let out = text(md);
        assert!(out.contains("??? note \"Tabs props take precedence:\"\n"), "{out}");
        assert!(out.contains("\n    - item\n"), "{out}");
        assert!(out.contains("\n    ```js\n    x\n    ```\n"), "{out}");
        let open = text("<details open>\nBody\n</details>\n");
        assert!(open.contains("???+ note \"Details\"\n\n    Body\n"), "{open}");
    }

    #[test]
    fn code_block_titles_become_captions() {
        let md = "Intro\n```js title=\"docusaurus.config.js\" showLineNumbers {1,4-6}\nlet a = {b};\n```\n";
        let (out, _) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t, ["Intro", "", "*docusaurus.config.js*", "", "```js", "let a = {b};", "```"]);
        assert_eq!(out[2].0, 1);
        assert_eq!(text("```bash npm2yarn\nnpm i\n```\n"), "```bash npm2yarn\nnpm i\n```\n");
    }

    #[test]
    fn inline_components_keep_their_text() {
        let md = "I can use <Highlight color=\"#25c2a0\">Docusaurus green</Highlight> everywhere!\n";
        let (out, notices) = run(md);
        assert_eq!(out, vec![(0, "I can use Docusaurus green everywhere!".to_string())]);
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].kind, NoticeKind::UnknownComponent);
    }

    #[test]
    fn block_components_go_and_are_reported_once() {
        let md = "<DocCardList />\n\n<BrowserWindow url=\"x\">\n  Text inside\n</BrowserWindow>\n\n<BrowserWindow>\nMore\n</BrowserWindow>\n<IframeWindow url=\"/docs/\" />\n";
        let (out, notices) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).filter(|l| !l.is_empty()).collect();
        assert_eq!(t, ["Text inside", "More"]);
        let names: Vec<&str> = notices.iter().map(|n| n.message.split('`').nth(1).unwrap_or("")).collect();
        assert_eq!(names, ["<DocCardList>", "<BrowserWindow>", "<IframeWindow>"]);
        assert_eq!(notices.iter().map(|n| n.line).collect::<Vec<_>>(), [0, 2, 9]);
    }

    #[test]
    fn expressions_and_literals() {
        let md = "Title: {frontMatter.title} and {'<'}div> and {\"x\"}{` `}y.\n## Heading {#custom-id}\nEscaped \\{ brace, math $\\int_{a}^{x}$, code `{x}`.\n{/* prettier-ignore */}\n";
        let out = text(md);
        assert_eq!(out, "Title:  and \\<div> and x y.\n## Heading {#custom-id}\nEscaped \\{ brace, math $\\int_{a}^{x}$, code `{x}`.\n\n");
    }

    #[test]
    fn multi_line_expressions_go() {
        let md = "<CodeBlock className=\"language-ts\">\n  {ThemeClassNamesCode\n    .replace(/x/g,'')\n    .trim()}\n</CodeBlock>\nAfter\n";
        let (out, notices) = run(md);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).filter(|l| !l.is_empty()).collect();
        assert_eq!(t, ["After"]);
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].kind, NoticeKind::MissingInclude);
    }

    #[test]
    fn code_block_component_with_literal() {
        let md = "<CodeBlock language=\"jsx\" title=\"/src/Hello.js\">\n  {`function Hello(props) {\n  return <h1>Hi</h1>;\n}`}\n</CodeBlock>\n";
        let out = text(md);
        assert!(
            out.contains("*/src/Hello.js*\n\n```jsx\nfunction Hello(props) {\n  return <h1>Hi</h1>;\n}\n```\n"),
            "{out}"
        );
    }

    #[test]
    fn text_after_a_tag_does_not_become_a_heading() {
        let md = "<Code language=\"md\">{'### Hello World \\u007B#id}\\n'}</Code>\n";
        let out = text(md);
        assert!(out.starts_with("\\### Hello World {#id}"), "{out}");
        let n = page(md, crate::Target::Html);
        assert!(!n.text.contains("\n#") && !n.text.starts_with('#'));
    }

    #[test]
    fn admonition_component() {
        let md = "<Admonition type=\"tip\" icon=\"💡\" title=\"Did you know...\">\n  Use plugins.\n</Admonition>\n";
        assert!(text(md).contains("!!! tip \"Did you know...\"\n\n    Use plugins.\n"), "{}", text(md));
    }

    #[test]
    fn html_stays_without_expression_props() {
        let md = "<div className=\"video\" style={{a: 1}}>\n<br/>\n</div>\n";
        assert_eq!(text(md), "<div className=\"video\">\n<br/>\n</div>\n");
    }

    #[test]
    fn fenced_code_is_untouched() {
        let md = "```md\n:::note\n<Tabs>\n{x}\nimport a from 'b';\n```\n";
        assert_eq!(text(md), md);
    }

    #[test]
    fn line_map_follows_the_source() {
        let md =
            "# T\n\n:::tip\n\nTip text\n\n:::\n\n<Tabs>\n<TabItem value=\"a\">\n\nTab text\n\n</TabItem>\n</Tabs>\n";
        let n = page(md, crate::Target::Text);
        let off = n.text.find("Tip text").unwrap_or(0);
        assert_eq!(n.source_line(off), 4);
        let off = n.text.find("Tab text").unwrap_or(0);
        assert_eq!(n.source_line(off), 11);
        let off = n.text.find("**a**").unwrap_or(0);
        assert_eq!(n.source_line(off), 9);
    }

    #[test]
    fn headings_are_kept_and_never_swallowed() {
        let md = "<Foo bar={1}>\n## Real heading\n</Foo>\n{\n## Also real\n";
        let out = text(md);
        assert!(out.contains("\n## Real heading\n"), "{out}");
        assert!(out.contains("## Also real"), "{out}");
    }

    #[test]
    fn titles_with_spaces_and_fragments() {
        let out = text("  ```ts title=\"src/My File.ts\" {2}\n  let x;\n  ```\n");
        assert_eq!(out, "\n  *src/My File.ts*\n\n  ```ts\n  let x;\n  ```\n");
        let frag =
            run("<><Highlight color=\"#25c2a0\">Green</Highlight>\n{` `}and <Highlight>blue</Highlight> here.</>\n");
        let t: Vec<&str> = frag.0.iter().map(|(_, l)| l.trim()).filter(|l| !l.is_empty()).collect();
        assert_eq!(t.join(" "), "Green and blue here.");
        assert_eq!(frag.1.len(), 1);
    }

    #[test]
    fn nested_tabs_and_self_closing_items() {
        let md = "<Tabs>\n<TabItem value=\"outer\">\n<Tabs>\n<TabItem value=\"inner\">\nDeep\n</TabItem>\n</Tabs>\n</TabItem>\n<TabItem value=\"empty\" />\n</Tabs>\n";
        let out = text(md);
        assert!(out.contains("=== \"outer\"\n\n\n    === \"inner\"\n\n        Deep\n"), "{out}");
        assert!(out.contains("=== \"empty\"\n"), "{out}");
    }
}
