//! `site-builder ingest pdf` end to end: PDFs are written by a tiny PDF writer in
//! this file (standard 14 fonts, text at fixed positions, a correct xref table), run
//! through the real binary, and the Markdown is checked and built.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::{assert_ok, run, stderr};
use kb_common::frontmatter::Frontmatter;

/// Text drawn at (x, y) from the bottom-left, in a font (`F1` Helvetica,
/// `F2` Helvetica-Bold) and size.
struct Text<'a> {
    x: f32,
    y: f32,
    font: &'a str,
    size: f32,
    text: &'a str,
}

fn t<'a>(x: f32, y: f32, font: &'a str, size: f32, text: &'a str) -> Text<'a> {
    Text { x, y, font, size, text }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('(', "\\(").replace(')', "\\)")
}

/// Encodes text as WinAnsi bytes (the few non-ASCII characters the tests use).
fn win_ansi(s: &str) -> Vec<u8> {
    s.chars()
        .map(|c| match c {
            '•' => 0x95,
            '–' => 0x96,
            c if c.is_ascii() => c as u8,
            _ => b'?',
        })
        .collect()
}

/// A PDF with one page per entry of `pages`; each page is a content stream. With
/// `info`, an Info dictionary; with `encrypt`, an /Encrypt entry in the trailer.
fn pdf(pages: &[Vec<u8>], info: Option<&str>, encrypt: bool) -> Vec<u8> {
    // Objects: 1 catalog, 2 pages, 3 F1, 4 F2, then per page (page, content), then
    // info, then the encryption dictionary.
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        Vec::new(), // pages, filled below
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>".to_vec(),
    ];
    let mut kids = Vec::new();
    for content in pages {
        let page_id = objects.len() + 1;
        kids.push(format!("{page_id} 0 R"));
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents {} 0 R >>",
                page_id + 1
            )
            .into_bytes(),
        );
        let mut stream = format!("<< /Length {} >>\nstream\n", content.len()).into_bytes();
        stream.extend_from_slice(content);
        stream.extend_from_slice(b"\nendstream");
        objects.push(stream);
    }
    objects[1] = format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), pages.len()).into_bytes();
    let info_id = info.map(|i| {
        objects.push(i.as_bytes().to_vec());
        objects.len()
    });
    let encrypt_id = encrypt.then(|| {
        objects.push(
            b"<< /Filter /Standard /V 1 /R 2 /Length 40 /O <0000000000000000000000000000000000000000000000000000000000000000> /U <0000000000000000000000000000000000000000000000000000000000000000> /P -4 >>"
                .to_vec(),
        );
        objects.len()
    });

    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for o in &offsets {
        let _ = writeln!(table, "{o:010} 00000 n ");
    }
    let mut trailer = format!("trailer\n<< /Size {} /Root 1 0 R", objects.len() + 1);
    if let Some(id) = info_id {
        let _ = write!(trailer, " /Info {id} 0 R");
    }
    if let Some(id) = encrypt_id {
        let _ = write!(
            trailer,
            " /Encrypt {id} 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]"
        );
    }
    let _ = write!(trailer, " >>\nstartxref\n{xref}\n%%EOF\n");
    out.extend_from_slice(table.as_bytes());
    out.extend_from_slice(trailer.as_bytes());
    out
}

fn content(texts: &[Text]) -> Vec<u8> {
    let mut s = Vec::new();
    for t in texts {
        s.extend_from_slice(format!("BT /{} {} Tf {} {} Td (", t.font, t.size, t.x, t.y).as_bytes());
        s.extend_from_slice(&win_ansi(&escape(t.text)));
        s.extend_from_slice(b") Tj ET\n");
    }
    s
}

fn handbook() -> Vec<u8> {
    let page1 = content(&[
        t(72.0, 720.0, "F2", 20.0, "Computer Science Handbook"),
        t(72.0, 680.0, "F2", 16.0, "Program requirements"),
        t(72.0, 655.0, "F1", 11.0, "Students in the program must complete all core courses with a grade"),
        t(72.0, 641.0, "F1", 11.0, "of C or better before they enrol in any elective course, and they"),
        t(72.0, 627.0, "F1", 11.0, "should meet their advisor once per term."),
        t(72.0, 600.0, "F1", 11.0, "The requirements are:"),
        t(72.0, 582.0, "F1", 11.0, "• 120 credits in total"),
        t(72.0, 568.0, "F1", 11.0, "• A capstone project"),
        t(72.0, 554.0, "F1", 11.0, "• Two semesters of mathematics"),
        t(72.0, 527.0, "F1", 11.0, "To graduate, follow these steps:"),
        t(72.0, 509.0, "F1", 11.0, "1. Submit the degree audit"),
        t(72.0, 495.0, "F1", 11.0, "2. Apply for graduation"),
        t(72.0, 481.0, "F1", 11.0, "3. Attend the exit interview"),
        t(300.0, 40.0, "F1", 9.0, "1"),
    ]);
    let page2 = content(&[
        t(72.0, 720.0, "F2", 16.0, "Courses"),
        t(72.0, 695.0, "F1", 11.0, "Core courses are offered every term and the schedule is published"),
        t(72.0, 681.0, "F1", 11.0, "by the registrar before enrolment opens."),
        t(72.0, 655.0, "F2", 11.0, "Code"),
        t(160.0, 655.0, "F2", 11.0, "Course"),
        t(420.0, 655.0, "F2", 11.0, "Credits"),
        t(72.0, 640.0, "F1", 11.0, "CS101"),
        t(160.0, 640.0, "F1", 11.0, "Introduction to Programming"),
        t(420.0, 640.0, "F1", 11.0, "4"),
        t(72.0, 625.0, "F1", 11.0, "CS201"),
        t(160.0, 625.0, "F1", 11.0, "Data Structures"),
        t(420.0, 625.0, "F1", 11.0, "4"),
        t(72.0, 610.0, "F1", 11.0, "CS301"),
        t(160.0, 610.0, "F1", 11.0, "Algorithms | Complexity"),
        t(420.0, 610.0, "F1", 11.0, "3"),
        t(72.0, 595.0, "F1", 11.0, "CS350"),
        t(160.0, 595.0, "F1", 11.0, "Operating Systems"),
        t(420.0, 595.0, "F1", 11.0, "3"),
        t(72.0, 555.0, "F2", 16.0, "Faculty"),
        t(72.0, 530.0, "F1", 11.0, "The department has twelve full-time faculty members whose research"),
        t(72.0, 516.0, "F1", 11.0, "covers systems, theory and machine learning."),
        t(72.0, 498.0, "F1", 11.0, "- Dr. Ada Lovelace, Chair"),
        t(72.0, 484.0, "F1", 11.0, "- Dr. Alan Turing, Graduate Director"),
        t(72.0, 455.0, "F2", 11.0, "Office hours"),
        t(72.0, 437.0, "F1", 11.0, "Faculty hold office hours on Tuesdays and Thursdays."),
        t(300.0, 40.0, "F1", 9.0, "2"),
    ]);
    pdf(&[page1, page2], Some("<< /Producer (test) /ModDate (D:20240115093000Z) >>"), false)
}

fn files_in(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
#[ignore = "needs the model (scripts/fetch-model): scripts/test runs it"]
fn handbook_becomes_a_page_that_builds_and_chunks_at_headings() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cs-handbook.pdf");
    std::fs::write(&file, handbook()).unwrap();
    let content_dir = dir.path().join("content");
    let o = run(&["ingest", "pdf", file.to_str().unwrap(), "--out", content_dir.to_str().unwrap()]);
    assert_ok(&o);

    let page = content_dir.join("computer-science-handbook.md");
    let md = std::fs::read_to_string(&page)
        .unwrap_or_else(|e| panic!("{}: {e}; files: {:?}", page.display(), files_in(&content_dir)));
    let fm = frontmatter_of(&md);
    let expected = Frontmatter {
        title: Some("Computer Science Handbook".into()),
        page_id: Some("computer-science-handbook".into()),
        source_file: Some("cs-handbook.pdf".into()),
        path: Some("Computer Science Handbook".into()),
        last_updated: Some("2024-01-15".into()),
        version: Some("1".into()),
        ..Frontmatter::default()
    };
    assert_eq!(fm, expected, "{md}");
    assert!(md.contains("\nlast_updated: '2024-01-15'\n"), "the date is quoted: {md}");
    assert!(md.contains("\n# Computer Science Handbook\n"), "{md}");
    for h in ["## Program requirements\n", "## Courses\n", "## Faculty\n"] {
        assert!(md.contains(&format!("\n{h}")), "missing {h:?} in\n{md}");
    }
    assert!(
        md.contains(
            "\nStudents in the program must complete all core courses with a grade of C or better before they enrol in any elective course, and they should meet their advisor once per term.\n"
        ),
        "{md}"
    );
    assert!(md.contains("\n- 120 credits in total\n- A capstone project\n- Two semesters of mathematics\n"), "{md}");
    assert!(
        md.contains("\n1. Submit the degree audit\n2. Apply for graduation\n3. Attend the exit interview\n"),
        "{md}"
    );
    assert!(
        md.contains(
            "\n| Code | Course | Credits |\n| --- | --- | --- |\n| CS101 | Introduction to Programming | 4 |\n| CS201 | Data Structures | 4 |\n| CS301 | Algorithms \\| Complexity | 3 |\n| CS350 | Operating Systems | 3 |\n"
        ),
        "{md}"
    );
    assert!(md.contains("\n- Dr. Ada Lovelace, Chair\n- Dr. Alan Turing, Graduate Director\n"), "{md}");
    // A bold line at body size is a minor heading; the bold table header is not.
    assert!(md.contains("\n### Office hours\n\nFaculty hold office hours on Tuesdays and Thursdays.\n"), "{md}");
    assert!(!md.contains("# Code"), "{md}");
    // The page numbers in the footer are gone.
    assert!(!md.lines().any(|l| l.trim() == "1" || l.trim() == "2"), "{md}");

    // The build takes the page as it is (site and index), and chunks it at the headings.
    let site = dir.path().join("site");
    let o = run(&[
        "build",
        "--content",
        content_dir.to_str().unwrap(),
        "--out",
        site.to_str().unwrap(),
        "--no-embed-cache",
        "--strict",
    ]);
    assert_ok(&o);
    let chunks = std::fs::read_to_string(site.join("chunks.jsonl")).unwrap();
    let chunks: Vec<serde_json::Value> = chunks.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(chunks.len() >= 3, "{chunks:?}");
    assert!(site.join("index.bin").is_file(), "the index was built");
    for h in ["Program requirements", "Courses", "Faculty"] {
        let under = |c: &serde_json::Value| c["headers"].as_array().is_some_and(|hs| hs.iter().any(|x| x == h));
        assert!(
            chunks.iter().any(|c| under(c) && c["text"].as_str().is_some_and(|t| t.starts_with(&format!("## {h}")))),
            "no chunk starts at {h}: {chunks:?}"
        );
    }
}

/// A manual as LaTeX and Texinfo typeset them: no /Title, the title repeated as
/// the running header of every page, a contents page with dot leaders and a roman
/// page number, arabic page numbers, and words hyphenated at line ends.
fn manual() -> Vec<u8> {
    let header = || t(72.0, 760.0, "F1", 9.0, "Campus Network Guide");
    let cover = content(&[
        header(),
        t(72.0, 700.0, "F2", 24.0, "Campus Network Guide"),
        t(72.0, 670.0, "F2", 16.0, "IT Services"),
        t(72.0, 600.0, "F2", 16.0, "Contents"),
        t(72.0, 575.0, "F2", 11.0, "1 Getting connected . . . . . . . . . . . . . . . . 1"),
        t(90.0, 561.0, "F1", 11.0, "1.1 Eduroam. . . . . . . . . . . . . . . . . . . . . 1"),
        t(72.0, 547.0, "F2", 11.0, "2 Troubleshooting . . . . . . . . . . . . . . . . . 2"),
        t(300.0, 40.0, "F1", 11.0, "i"),
    ]);
    let p1 = content(&[
        header(),
        t(72.0, 700.0, "F2", 16.0, "1 Getting connected"),
        t(72.0, 670.0, "F1", 11.0, "Every device on campus connects through eduroam. Its config-"),
        t(72.0, 656.0, "F1", 11.0, "uration needs your university account and the command-"),
        t(72.0, 642.0, "F1", 11.0, "line tool is optional."),
        t(300.0, 40.0, "F1", 11.0, "1"),
    ]);
    let p2 = content(&[
        header(),
        t(72.0, 700.0, "F2", 16.0, "2 Troubleshooting"),
        t(72.0, 670.0, "F1", 11.0, "Check the configuration first. The command-line tool prints the state"),
        t(72.0, 656.0, "F1", 11.0, "of every interface."),
        t(300.0, 40.0, "F1", 11.0, "2"),
    ]);
    pdf(&[cover, p1, p2], Some("<< /Producer (test) /Title () >>"), false)
}

#[test]
fn a_typeset_manual_comes_out_clean() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("network.pdf");
    std::fs::write(&file, manual()).unwrap();
    let out = dir.path().join("content");
    let o = run(&["ingest", "pdf", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_ok(&o);
    let page = out.join("campus-network-guide.md");
    let md = std::fs::read_to_string(&page)
        .unwrap_or_else(|e| panic!("{}: {e}; files: {:?}", page.display(), files_in(&out)));
    // The empty /Title gives way to the largest text of the first page, which the
    // running header repeats (and is dropped with it).
    assert_eq!(frontmatter_of(&md).title.as_deref(), Some("Campus Network Guide"), "{md}");
    assert!(md.contains("\n# Campus Network Guide\n"), "{md}");
    // The contents page is gone, heading and entries; the sections are not.
    assert!(!md.contains(". . ."), "{md}");
    assert!(!md.contains("Contents"), "{md}");
    assert!(md.contains("\n## 1 Getting connected\n"), "{md}");
    assert!(md.contains("\n## 2 Troubleshooting\n"), "{md}");
    // Page numbers, roman and arabic, are gone.
    assert!(!md.lines().any(|l| ["i", "1", "2"].contains(&l.trim())), "{md}");
    // `config-` + `uration` is joined (the document writes "configuration");
    // `command-` + `line` keeps its hyphen (it writes "command-line").
    assert!(
        md.contains("Its configuration needs your university account and the command-line tool is optional."),
        "{md}"
    );
}

/// Two real manuals from Debian packages (`libtasn1-doc`, `shared-mime-info`; `.ci/run`
/// installs them), read where Debian puts them: what a new user would try first.
#[test]
#[ignore = "needs the Debian manuals (scripts/test-deps installs them): scripts/test runs it"]
fn debian_manuals_come_out_clean() {
    let manuals = [
        ("/usr/share/doc/libtasn1-doc/libtasn1.pdf", "Libtasn1", "libtasn1.md", "manipulation"),
        (
            "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
            "Shared MIME-info Database",
            "shared-mime-info-database.md",
            "Shared MIME-info Database specification",
        ),
    ];
    for (pdf, title, file, phrase) in manuals {
        assert!(
            Path::new(pdf).is_file(),
            "{pdf} is missing: apt-get install --reinstall libtasn1-doc shared-mime-info (as .ci/run does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("content");
        let o = run(&["ingest", "pdf", pdf, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{pdf}: {}", stderr(&o));
        let md = std::fs::read_to_string(out.join(file))
            .unwrap_or_else(|e| panic!("{pdf} → {file}: {e}; files: {:?}", files_in(&out)));
        assert_eq!(frontmatter_of(&md).title.as_deref(), Some(title), "{pdf}: {}", &md[..md.len().min(400)]);
        assert!(md.contains(phrase), "{pdf}: no {phrase:?}");
        for line in md.lines() {
            let l = line.trim();
            assert!(!l.contains(". . . ."), "{pdf}: a contents line is left: {l}");
            let label =
                !l.is_empty() && (l.chars().all(|c| c.is_ascii_digit()) || l.chars().all(|c| "ivxIVX".contains(c)));
            assert!(!label, "{pdf}: a page number is left: {l}");
        }
        assert!(!md.contains("manip-ulation") && !md.contains("man-agement"), "{pdf}: a word split at a line end");
        let o = run(&[
            "build",
            "--content",
            out.to_str().unwrap(),
            "--out",
            dir.path().join("site").to_str().unwrap(),
            "--no-index",
        ]);
        assert!(o.status.success(), "{pdf}: {}", stderr(&o));
    }
}

#[test]
fn title_option_wins() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.pdf");
    std::fs::write(&file, handbook()).unwrap();
    let out = dir.path().join("c");
    let o =
        run(&["ingest", "pdf", file.to_str().unwrap(), "--title", "CS: the handbook", "--out", out.to_str().unwrap()]);
    assert_ok(&o);
    let md = std::fs::read_to_string(out.join("cs-the-handbook.md")).unwrap();
    assert_eq!(frontmatter_of(&md).title.as_deref(), Some("CS: the handbook"), "{md}");
}

fn refused(name: &str, bytes: Option<&[u8]>, message: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    if let Some(b) = bytes {
        std::fs::write(&file, b).unwrap();
    }
    let out = dir.path().join("content");
    let o = run(&["ingest", "pdf", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(name) && err.contains(message), "expected {message:?} about {name} in {err}");
    assert!(files_in(&out).is_empty(), "wrote {:?}", files_in(&out));
}

#[test]
fn a_text_file_is_not_a_pdf() {
    refused("notes.pdf", Some(b"hello, these are my notes\n"), "is not a PDF (it starts with");
}

#[test]
fn an_encrypted_pdf_is_refused() {
    let page = content(&[t(72.0, 720.0, "F1", 11.0, "Secret")]);
    refused("locked.pdf", Some(&pdf(&[page], None, true)), "is encrypted; decrypt it first, e.g. with qpdf --decrypt");
}

#[test]
fn a_pdf_without_text_is_refused() {
    let page = b"0 0 1 rg 100 100 200 300 re f\n".to_vec();
    refused("scan.pdf", Some(&pdf(&[page], None, false)), "has no text layer (a scanned document?); run OCR first");
}

#[test]
fn a_missing_file_is_refused() {
    refused("nowhere.pdf", None, "no such file");
}

/// The frontmatter of a written page, read as the build reads it.
fn frontmatter_of(md: &str) -> Frontmatter {
    Frontmatter::of_page(md).unwrap_or_else(|e| panic!("{e}: {md}")).unwrap_or_else(|| panic!("no frontmatter: {md}"))
}
