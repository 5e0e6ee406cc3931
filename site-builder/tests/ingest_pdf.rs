//! `site-builder ingest pdf` end to end: PDFs are written by a tiny PDF writer in
//! this file (standard 14 fonts, text at fixed positions, a correct xref table), run
//! through the real binary, and the Markdown is checked and built.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use common::{assert_ok, run, stderr};
use kb_common::frontmatter::Frontmatter;

/// Text drawn at (x, y) from the bottom-left, in a font (`F1` Helvetica,
/// `F2` Helvetica-Bold) and size.
#[derive(Clone)]
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

/// Lines of body text (`F1`, 11 pt) at the left margin, the first at `y`, each
/// 14 pt below the one before: a paragraph, or a list.
fn lines<'a>(y: f32, texts: &[&'a str]) -> Vec<Text<'a>> {
    texts.iter().enumerate().map(|(i, text)| t(72.0, y - 14.0 * i as f32, "F1", 11.0, text)).collect()
}

/// A row of the handbook's course table at `y`: code, course, credits.
fn row<'a>(y: f32, font: &'a str, cells: [&'a str; 3]) -> Vec<Text<'a>> {
    [72.0, 160.0, 420.0].into_iter().zip(cells).map(|(x, cell)| t(x, y, font, 11.0, cell)).collect()
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
    let page1 = [
        vec![
            t(72.0, 720.0, "F2", 20.0, "Computer Science Handbook"),
            t(72.0, 680.0, "F2", 16.0, "Program requirements"),
        ],
        lines(
            655.0,
            &[
                "Students in the program must complete all core courses with a grade",
                "of C or better before they enrol in any elective course, and they",
                "should meet their advisor once per term.",
            ],
        ),
        lines(600.0, &["The requirements are:"]),
        lines(582.0, &["• 120 credits in total", "• A capstone project", "• Two semesters of mathematics"]),
        lines(527.0, &["To graduate, follow these steps:"]),
        lines(509.0, &["1. Submit the degree audit", "2. Apply for graduation", "3. Attend the exit interview"]),
        vec![t(300.0, 40.0, "F1", 9.0, "1")],
    ];
    let courses = [
        ["CS101", "Introduction to Programming", "4"],
        ["CS201", "Data Structures", "4"],
        ["CS301", "Algorithms | Complexity", "3"],
        ["CS350", "Operating Systems", "3"],
    ];
    let page2 = [
        vec![t(72.0, 720.0, "F2", 16.0, "Courses")],
        lines(
            695.0,
            &[
                "Core courses are offered every term and the schedule is published",
                "by the registrar before enrolment opens.",
            ],
        ),
        row(655.0, "F2", ["Code", "Course", "Credits"]),
        courses.into_iter().enumerate().flat_map(|(i, cells)| row(640.0 - 15.0 * i as f32, "F1", cells)).collect(),
        vec![t(72.0, 555.0, "F2", 16.0, "Faculty")],
        lines(
            530.0,
            &[
                "The department has twelve full-time faculty members whose research",
                "covers systems, theory and machine learning.",
            ],
        ),
        lines(498.0, &["- Dr. Ada Lovelace, Chair", "- Dr. Alan Turing, Graduate Director"]),
        vec![t(72.0, 455.0, "F2", 11.0, "Office hours")],
        lines(437.0, &["Faculty hold office hours on Tuesdays and Thursdays."]),
        vec![t(300.0, 40.0, "F1", 9.0, "2")],
    ];
    pdf(
        &[content(&page1.concat()), content(&page2.concat())],
        Some("<< /Producer (test) /ModDate (D:20240115093000Z) >>"),
        false,
    )
}

/// Writes `pdf` as `name` in a new temporary folder and ingests it, with `args`,
/// into the folder's `content/`; returns the temporary folder and `content/`.
fn ingest(name: &str, pdf: &[u8], args: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, pdf).unwrap();
    let out = dir.path().join("content");
    assert_ok(&run(&[&["ingest", "pdf", file.to_str().unwrap(), "--out", out.to_str().unwrap()], args].concat()));
    (dir, out)
}

/// The page `file` that an ingest wrote into `content`.
fn written(content: &Path, file: &str) -> String {
    let page = content.join(file);
    std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}; files: {:?}", page.display(), files_in(content)))
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
    let (dir, content_dir) = ingest("cs-handbook.pdf", &handbook(), &[]);
    let md = written(&content_dir, "computer-science-handbook.md");
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
    let folio = |n| t(300.0, 40.0, "F1", 11.0, n);
    let cover = content(&[
        header(),
        t(72.0, 700.0, "F2", 24.0, "Campus Network Guide"),
        t(72.0, 670.0, "F2", 16.0, "IT Services"),
        t(72.0, 600.0, "F2", 16.0, "Contents"),
        t(72.0, 575.0, "F2", 11.0, "1 Getting connected . . . . . . . . . . . . . . . . 1"),
        t(90.0, 561.0, "F1", 11.0, "1.1 Eduroam. . . . . . . . . . . . . . . . . . . . . 1"),
        t(72.0, 547.0, "F2", 11.0, "2 Troubleshooting . . . . . . . . . . . . . . . . . 2"),
        folio("i"),
    ]);
    // A chapter: the running header, its heading, its text and its page number.
    let chapter = |n, heading, body: &[&'static str]| {
        content(&[vec![header(), t(72.0, 700.0, "F2", 16.0, heading)], lines(670.0, body), vec![folio(n)]].concat())
    };
    let p1 = chapter(
        "1",
        "1 Getting connected",
        &[
            "Every device on campus connects through eduroam. Its config-",
            "uration needs your university account and the command-",
            "line tool is optional.",
        ],
    );
    let p2 = chapter(
        "2",
        "2 Troubleshooting",
        &["Check the configuration first. The command-line tool prints the state", "of every interface."],
    );
    pdf(&[cover, p1, p2], Some("<< /Producer (test) /Title () >>"), false)
}

#[test]
fn a_typeset_manual_comes_out_clean() {
    let (_dir, out) = ingest("network.pdf", &manual(), &[]);
    let md = written(&out, "campus-network-guide.md");
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
    let (_dir, out) = ingest("h.pdf", &handbook(), &["--title", "CS: the handbook"]);
    let md = written(&out, "cs-the-handbook.md");
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
