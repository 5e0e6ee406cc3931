//! Hugo shortcodes → MkDocs containers and text.
//!
//! Hugo pages call templates from their text: `{{< name args >}}` (inner text
//! as HTML) and `{{% name args %}}` (inner text as Markdown), closed by
//! `{{< /name >}}` or self-closing `{{< name />}}`; arguments are positional or
//! `key="value"`. A CommonMark renderer shows every call as raw text, so this
//! pass renders the ones documentation sites use (the Kubernetes site's first),
//! outside fenced code and inline code, where pages *about* shortcodes show them:
//!
//! | shortcode | becomes |
//! | --- | --- |
//! | `note`, `caution`, `warning`, `tip`, `info`, `alert` (own lines, or one line with text) | `!!! note "Note"` + indented body (`caution` → `warning` "Caution"; `title=` kept) |
//! | the same inside a paragraph | its inner text |
//! | `tabs` + `tab name="Label"` | one `=== "Label"` per tab; `include="f"` reads that page, `codelang=` fences the tab |
//! | `details summary="S"` | `??? note "S"` |
//! | `table caption="C"` | `*C*` and the table |
//! | `glossary_tooltip text="Pods" term_id="pod"` | `[Pods](…/glossary/pod.md)` when the glossary page is known, else `Pods` (the term's title without `text`) |
//! | `glossary_definition term_id="pod" length="short\|long\|all" prepend="A Pod is"` | the glossary page's text: before `<!--more-->` for `short`, all of it otherwise (the Html form); in the Text form a link to the glossary page, so the index keeps the definition on that page only |
//! | `code_sample file="pods/simple-pod.yaml"` (also `codenew`, `code`) | `*Example: pods/simple-pod.yaml*` (the file is not a page: reported) |
//! | `heading "prerequisites"` | `Before you begin` (and the other headings Hugo's English i18n gives) |
//! | `feature-state for_k8s_version="v1.29" state="stable"` | `*FEATURE STATE: Kubernetes v1.29 [stable]*` (`feature_gate_name=X`: `feature gate X`) |
//! | `skew currentVersion`, `param "version"`, `latest-version` | `` `currentVersion` `` (plain inside a link destination) |
//! | `ref "x.md"` / `relref "x.md"` | the link to that page when known, else the path as written |
//! | `figure src="x" alt="y" caption="z"` | `![y](x)` and `*z*` |
//! | `youtube id` | a link to the video |
//! | `link text="t" url="u"` | `[t](u)` |
//! | `api-reference page="workload-resources/pod-v1"` | a link to that API reference page |
//! | `include "file.md"` | that page's text when known, else left out (reported) |
//! | `comment` … `/comment` | removed with everything inside |
//! | `mermaid`, `highlight lang` … | a fenced ```` ```mermaid ```` / ```` ```lang ```` block |
//! | `{{</* name */>}}` (Hugo's escape) | `{{< name >}}` as text |
//! | other paired shortcodes | tags removed, inner text kept (reported once per name) |
//! | other standalone shortcodes | removed (reported once per name) |
//!
//! A call may span lines (`{{< glossary_tooltip text="Deployment"` ⏎
//! `term_id="deployment" >}}`): its lines are joined first. Containers are
//! nested with the same block tree as [`crate::mdx`], so a note inside a tab
//! inside a list item keeps its place.
//!
//! | module | job |
//! | --- | --- |
//! | `calls` | the call syntax: parsing, lines split into text and calls, split calls joined |
//! | `scanner` | the page read line by line into container items; what each shortcode is |
//! | `containers` | admonitions, `alert`, `tabs`/`tab`, `details`, `table` as blocks |
//! | `inline` | the shortcodes rendered where they stand (headings, versions, refs, figures, links…) |
//! | `glossary` | `glossary_tooltip` and `glossary_definition` |
//! | `include` | `include`, code samples, and included text rendered in turn |

mod calls;
mod containers;
mod glossary;
mod include;
mod inline;
mod scanner;

use std::collections::HashSet;

use crate::mdx::tree;
use crate::{Line, Notice, Resolver, Target};
use calls::{closed_names, join_split_calls};
use scanner::Scanner;

/// Translates one Hugo page's shortcodes.
pub fn translate(lines: Vec<Line>, target: Target, resolver: &dyn Resolver, notices: &mut Vec<Notice>) -> Vec<Line> {
    // Every page is read for shortcodes: one without any is left as it is.
    if !lines.iter().any(|(_, l)| l.contains("{{<") || l.contains("{{%")) {
        return lines;
    }
    let mut reported = HashSet::new();
    translate_at(lines, target, resolver, notices, &mut reported, 0)
}

/// How deep included text (a glossary definition, an include) may nest.
const MAX_DEPTH: usize = 3;

/// Translates lines of a page, or of text it includes at `depth`.
fn translate_at(
    lines: Vec<Line>,
    target: Target,
    resolver: &dyn Resolver,
    notices: &mut Vec<Notice>,
    reported: &mut HashSet<String>,
    depth: usize,
) -> Vec<Line> {
    let lines = join_split_calls(lines);
    let paired = closed_names(&lines);
    let mut scanner = Scanner {
        target,
        resolver,
        notices,
        reported,
        depth,
        paired,
        block_open: Vec::new(),
        tabs: 0,
        items: Vec::new(),
    };
    scanner.scan(&lines);
    let root = tree::build(scanner.items);
    let mut out = Vec::with_capacity(lines.len());
    tree::emit(&root, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NoResolver, NoticeKind, Target};

    /// A knowledge base of a few pages: `reference/glossary/pod.md` and others.
    struct Kb;
    impl Resolver for Kb {
        fn source(&self) -> &str {
            "concepts/workloads/pods/_index.md"
        }
        fn page(&self, target: &str) -> Option<String> {
            match target {
                "glossary/pod" => Some("reference/glossary/pod.md".to_string()),
                "glossary/container" => Some("reference/glossary/container.md".to_string()),
                "docs/concepts/overview" => Some("concepts/overview/_index.md".to_string()),
                _ => None,
            }
        }
        fn body(&self, path: &str) -> Option<String> {
            match path {
                "reference/glossary/pod.md" => Some(
                    " The smallest Kubernetes object. A set of {{< glossary_tooltip text=\"containers\" term_id=\"container\" >}}.\n\n<!--more-->\n\nLong part <!-- hidden -->.\n".to_string(),
                ),
                "reference/glossary/container.md" => Some("A container.\n".to_string()),
                "concepts/workloads/pods/linux.md" => Some("Linux tab text\n".to_string()),
                _ => None,
            }
        }
        fn title(&self, path: &str) -> Option<String> {
            (path == "reference/glossary/pod.md").then(|| "Pod".to_string())
        }
    }

    fn run_with(md: &str, resolver: &dyn Resolver) -> (Vec<Line>, Vec<Notice>) {
        let mut notices = Vec::new();
        let lines = md.lines().enumerate().map(|(i, l)| (i, l.to_string())).collect();
        (translate(lines, Target::Html, resolver, &mut notices), notices)
    }

    fn text_with(md: &str, resolver: &dyn Resolver) -> String {
        run_with(md, resolver).0.iter().map(|(_, l)| format!("{l}\n")).collect()
    }

    fn text(md: &str) -> String {
        text_with(md, &NoResolver)
    }

    #[test]
    fn admonitions_as_blocks_and_inline() {
        let out = text("Para\n{{< note >}}\nBody **text**.\n{{< /note >}}\nAfter\n");
        assert_eq!(out, "Para\n\n!!! note \"Note\"\n\n    Body **text**.\n\nAfter\n");
        let one = text("{{< caution >}}Careful.{{< /caution >}}\n");
        assert!(one.contains("!!! warning \"Caution\"\n    Careful.\n"), "{one}");
        let inline = text("Text {{< note >}}inline{{< /note >}} more.\n");
        assert_eq!(inline, "Text inline more.\n");
        let alert = text("{{% alert title=\"Heads up\" color=\"warning\" %}}\nx\n{{% /alert %}}\n");
        assert!(alert.contains("!!! warning \"Heads up\"\n"), "{alert}");
    }

    #[test]
    fn notes_in_list_items_keep_their_indentation() {
        let md = "1. Step\n\n   {{% note %}}\n   If the hook is slow,\n   wait.\n   {{% /note %}}\n2. Next\n";
        let out = text(md);
        assert!(out.contains("\n   !!! note \"Note\"\n\n       If the hook is slow,\n       wait.\n"), "{out}");
        let n = crate::normalize(md, Target::Html, crate::Dialect::Hugo.dialects(), &NoResolver);
        assert!(n.text.contains("<aside class=\"admonition note\""), "{}", n.text);
    }

    #[test]
    fn tabs_with_notes_inside() {
        let md = "{{< tabs name=\"dashboard\" >}}\n{{% tab name=\"Launch a browser\" %}}\nRun:\n```shell\n{{< note >}} in code\n```\n{{< note >}}\nNote in tab.\n{{< /note >}}\n{{% /tab %}}\n{{% tab %}}\nSecond\n{{% /tab %}}\n{{% /tabs %}}\nAfter\n";
        let out = text(md);
        assert!(
            out.contains("=== \"Launch a browser\"\n\n    Run:\n    ```shell\n    {{< note >}} in code\n    ```\n"),
            "{out}"
        );
        assert!(out.contains("\n    !!! note \"Note\"\n\n        Note in tab.\n"), "{out}");
        assert!(out.contains("=== \"Tab 2\"\n\n    Second\n"), "{out}");
        assert!(out.ends_with("\nAfter\n"), "{out}");
    }

    #[test]
    fn tab_includes_read_the_file_or_report() {
        let md = "{{< tabs name=\"os\" >}}\n{{< tab name=\"Linux\" include=\"linux.md\" />}}\n{{< tab name=\"Mac\" include=\"mac.md\" />}}\n{{< /tabs >}}\n";
        let (out, notices) = run_with(md, &Kb);
        let t: String = out.iter().map(|(_, l)| format!("{l}\n")).collect();
        assert!(t.contains("=== \"Linux\"\n    Linux tab text\n"), "{t}");
        assert!(t.contains("=== \"Mac\"\n"), "{t}");
        assert_eq!(notices.len(), 1);
        assert_eq!(notices[0].kind, NoticeKind::MissingInclude);
        assert_eq!(notices[0].line, 2);
    }

    #[test]
    fn glossary_tooltips_link_when_known() {
        let md = "A {{< glossary_tooltip text=\"Pod\" term_id=\"pod\" >}} and {{< glossary_tooltip text=\"Deployment\"\nterm_id=\"deployment\" >}} or {{< glossary_tooltip term_id=\"pod\" >}}.\n#### {{< glossary_tooltip term_id=\"pod\" >}}\n";
        let (out, notices) = run_with(md, &Kb);
        assert_eq!(out[0], (0, "A [Pod](../../../reference/glossary/pod.md) and Deployment or [Pod](../../../reference/glossary/pod.md).".to_string()));
        assert_eq!(out[1], (2, "#### Pod".to_string()));
        assert!(notices.is_empty());
        assert_eq!(text("{{< glossary_tooltip term_id=\"node\" >}}\n"), "node\n");
    }

    #[test]
    fn the_index_keeps_a_definition_on_its_glossary_page_only() {
        let mut notices = Vec::new();
        let lines = vec![(0, "{{< glossary_definition term_id=\"pod\" length=\"all\" >}}".to_string())];
        let text = translate(lines, Target::Text, &Kb, &mut notices);
        let joined: Vec<&str> = text.iter().map(|(_, l)| l.as_str()).collect();
        assert!(joined.iter().any(|l| l.starts_with("*Definition: [") && l.contains("pod.md")), "{joined:?}");
        assert!(notices.is_empty(), "{notices:?}");
    }

    #[test]
    fn glossary_definitions_inline_the_glossary_text() {
        let (out, notices) = run_with(
            "Intro\n\n{{< glossary_definition term_id=\"pod\" length=\"short\" prepend=\"A Pod is\" >}}\n",
            &Kb,
        );
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t, ["Intro", "", "A Pod is the smallest Kubernetes object. A set of [containers](../../../reference/glossary/container.md)."]);
        assert_eq!(out[2].0, 2);
        assert!(notices.is_empty());
        let all = text_with("{{< glossary_definition term_id=\"pod\" length=\"all\" >}}\n", &Kb);
        assert!(all.contains("\nLong part .\n") && !all.contains("hidden") && !all.contains("more"), "{all}");
        let (missing, notices) = run_with("{{< glossary_definition term_id=\"nope\" length=\"all\" >}}\n", &Kb);
        assert_eq!(missing, vec![(0, String::new())]);
        assert_eq!(notices[0].kind, NoticeKind::MissingInclude);
    }

    #[test]
    fn code_samples_are_named_and_reported() {
        let (out, notices) = run_with(
            "{{% code_sample file=\"pods/simple-pod.yaml\" %}}\n{{% codenew file=\"a.yaml\" %}}\n",
            &NoResolver,
        );
        assert_eq!(out[0].1, "*Example: pods/simple-pod.yaml*");
        assert_eq!(out[1].1, "*Example: a.yaml*");
        assert_eq!(notices.len(), 2);
        assert!(notices[0].message.contains("pods/simple-pod.yaml"));
    }

    #[test]
    fn headings_and_feature_states() {
        let out = text("## {{% heading \"prerequisites\" %}}\n## {{% heading \"whatsnext\" %}}\n{{< feature-state for_k8s_version=\"1.22\" state=\"stable\" >}}\n{{< feature-state feature_gate_name=\"SidecarContainers\" >}}\n");
        assert_eq!(out, "## Before you begin\n## What's next\n*FEATURE STATE: Kubernetes v1.22 [stable]*\n*FEATURE STATE: feature gate SidecarContainers*\n");
    }

    #[test]
    fn versions_and_params() {
        let out = text("Kubernetes {{< skew currentVersion >}} and [API](/docs/reference/generated/kubernetes-api/{{< param \"version\" >}}/#pod).\n");
        assert_eq!(
            out,
            "Kubernetes `currentVersion` and [API](/docs/reference/generated/kubernetes-api/version/#pod).\n"
        );
    }

    #[test]
    fn refs_figures_and_videos() {
        let out = text_with(
            "[Overview]({{< ref \"/docs/concepts/overview.md#x\" >}}) [Other]({{< relref \"other.md\" >}})\n",
            &Kb,
        );
        assert_eq!(out, "[Overview](../../overview/_index.md#x) [Other](other.md)\n");
        let fig = text("{{< figure src=\"/images/pod.svg\" alt=\"Pod diagram\" caption=\"A Pod\" class=\"x\" >}}\n");
        assert_eq!(fig, "![Pod diagram](/images/pod.svg)\n*A Pod*\n");
        assert_eq!(text("{{< youtube abc123 >}}\n"), "[YouTube video](https://www.youtube.com/watch?v=abc123)\n");
        assert_eq!(text("{{< link text=\"services\" url=\"/docs/s/\" >}} in\n"), "[services](/docs/s/) in\n");
    }

    #[test]
    fn comments_mermaid_and_highlight() {
        let md = "a\n{{< comment >}}\nHidden\n## Hidden heading\n{{< /comment >}}\nb {{< comment >}}gone{{< /comment >}} c\n{{< mermaid >}}\ngraph TD;\n{{< /mermaid >}}\n{{< highlight go >}}\nfunc main() {}\n{{< /highlight >}}\n";
        assert_eq!(text(md), "a\n\nb  c\n```mermaid\ngraph TD;\n```\n```go\nfunc main() {}\n```\n");
    }

    #[test]
    fn unknown_shortcodes_keep_inner_text_and_report_once() {
        let md = "{{< version-check >}}\nText {{< version-check >}}\n{{< mybox >}}\nInner\n{{< /mybox >}}\nSee {{< mybox >}}here{{< /mybox >}}.\n";
        let (out, notices) = run_with(md, &NoResolver);
        let t: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(t, ["", "Text ", "", "Inner", "", "See here."]);
        assert_eq!(notices.len(), 2);
        assert!(notices.iter().all(|n| n.kind == NoticeKind::UnknownShortcode));
        assert_eq!(notices[0].message, "`{{< version-check >}}` is not a shortcode this build knows; it was left out");
        assert_eq!(notices[1].line, 2);
    }

    #[test]
    fn shortcodes_in_fences_stay() {
        let md = "```\n{{< note >}}\n{{< glossary_tooltip text=\"x\" term_id=\"y\" >}}\n{{</* note */>}}\n```\n";
        assert_eq!(
            text(md),
            "```\n{{< note >}}\n{{< glossary_tooltip text=\"x\" term_id=\"y\" >}}\n{{< note >}}\n```\n"
        );
    }

    #[test]
    fn details_and_tables() {
        let out = text("{{< details summary=\"More\" >}}\nHidden text\n{{< /details >}}\n{{< table caption=\"Volumes\" >}}\n| a |\n|---|\n{{< /table >}}\n");
        assert!(out.contains("??? note \"More\"\n\n    Hidden text\n"), "{out}");
        assert!(out.contains("*Volumes*\n\n| a |\n|---|\n"), "{out}");
    }

    #[test]
    fn line_map_after_joined_calls() {
        let md = "x\n{{< glossary_tooltip text=\"a\"\nterm_id=\"b\" >}} y\nz\n";
        let (out, _) = run_with(md, &NoResolver);
        assert_eq!(out, vec![(0, "x".to_string()), (1, "a y".to_string()), (3, "z".to_string())]);
    }
}
