//! Shared by the integration tests in `tests/`: the demo content built into a site
//! and index once, the real `search_fn.wasm` compiled over that index, the local
//! host serving both on an ephemeral port, and a small HTTP client.
//!
//! Nothing here is a stand-in: the site and index come from the `site-builder`
//! binary, the component from `cargo build --target wasm32-wasip2 -p search-fn`
//! (into a target folder of its own, so the outer `cargo test` lock is not
//! contended), and the host is `edge_host`, the code behind `site-builder serve`.

#![allow(dead_code)]

pub mod llm;
pub mod postgres;
pub mod schema;
pub mod tls_proxy;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The target folder the tests run from (`…/target`), for the nested builds.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/debug/deps/edge_api-HASH
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// A built demo: `dist` (site, index, encoder, report) and the component over it.
pub struct Demo {
    pub dist: PathBuf,
    pub component: PathBuf,
}

/// Builds the demo content and the component once per test binary.
pub fn demo() -> &'static Demo {
    static DEMO: OnceLock<Demo> = OnceLock::new();
    DEMO.get_or_init(|| built("content"))
}

/// A help centre in German and English (five pages, `de/` and `en/`; the
/// Wi-Fi and printing pages translations of one another by their
/// `translationKey`, the parking page untranslated), built once per test
/// binary with MiniLM named (the browser engine and the query reading follow
/// the pages' languages, not the model) and the browser engines of
/// search-web/pkg; its `dist`.
pub fn two_languages() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let pages = [
            ("de/wlan.md", "---\ntitle: WLAN verbinden\ntranslationKey: wifi\n---\n# WLAN verbinden\n\nVerbinden Sie Ihren Laptop mit dem WLAN eduroam. Melden Sie sich mit Ihrer Kennung und Ihrem Passwort an.\n"),
            ("de/drucken.md", "---\ntitle: Drucken\ntranslationKey: printing\n---\n# Drucken\n\nDokumente drucken Sie an jedem Drucker auf dem Campus. Die Kosten werden von Ihrem Guthaben abgezogen.\n"),
            ("en/wifi.md", "---\ntitle: Connect to Wi-Fi\ntranslationKey: wifi\n---\n# Connect to Wi-Fi\n\nConnect your laptop to the eduroam wireless network with your user name and password.\n"),
            ("en/printing.md", "---\ntitle: Printing\ntranslationKey: printing\n---\n# Printing\n\nPrint your documents on any printer on campus. The cost is taken from your balance.\n"),
            ("en/parking.md", "# Parking permits\n\nParking permits are sold per semester at the campus office: apply with form PK-7.\n"),
        ];
        let pages: Vec<(String, String)> = pages.iter().map(|&(f, t)| (f.into(), t.into())).collect();
        build_pages("two-languages", &pages)
    })
}

/// An English help desk of 24 pages with one page in Finnish (4 % of the
/// chunks: no query is read in Finnish unless it asks), built once per test
/// binary as [`two_languages`] is; its `dist`.
pub fn rare_language() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let topics = [
            "printing", "parking", "library", "wifi", "email", "calendar", "housing", "meals", "sports", "transport",
            "exams", "grades", "thesis", "lockers", "keys", "mail", "laundry", "bikes", "health", "counselling",
            "careers", "alumni", "events", "clubs",
        ];
        let mut pages: Vec<(String, String)> = topics
            .iter()
            .map(|t| {
                let title = format!("{}{}", t[..1].to_uppercase(), &t[1..]);
                let text = format!("# {title}\n\nEverything about {t} on campus: where to find the {t} office, its opening hours and whom to ask about {t}.\n");
                (format!("en/{t}.md"), text)
            })
            .collect();
        pages.push((
            "fi/salasana.md".into(),
            "# Salasanan vaihtaminen\n\nVoit vaihtaa salasanasi käyttäjätilin asetuksista. Uuden salasanan on oltava vähintään kaksitoista merkkiä pitkä, ja vanhaa salasanaa ei voi käyttää uudelleen.\n".into(),
        ));
        build_pages("rare-language", &pages)
    })
}

/// Writes `pages` (path, Markdown) under the tests' target folder and builds
/// them with MiniLM named and the browser engines of search-web/pkg; the `dist`.
fn build_pages(name: &str, pages: &[(String, String)]) -> PathBuf {
    let content = target_dir().join(format!("edge-tests/{name}-content"));
    let _ = std::fs::remove_dir_all(&content);
    for (file, text) in pages {
        let path = content.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let dist = target_dir().join(format!("edge-tests/{name}"));
    let minilm = std::env::var("KB_MODEL_DIR")
        .unwrap_or_else(|_| repo().join(".cache/models/all-MiniLM-L6-v2").display().to_string());
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["build", "--quiet", "--model", &minilm, "--content"])
        .arg(&content)
        .arg("--out")
        .arg(&dist)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "build of the {name} site failed:\n{}", String::from_utf8_lossy(&o.stderr));
    dist
}

/// Builds a workspace package as a wasm32-wasip2 component (the `component` profile) into the
/// tests' own target folder, and returns a copy of the `.wasm` named after the
/// build's environment: the same package built over another index (`KB_INDEX`)
/// overwrites cargo's output, so hosts keep their own copies. Builds and copies
/// of one process are serialised.
pub fn build_component(package: &str, env: &[(&str, &Path)]) -> PathBuf {
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let target = target_dir().join("edge-tests/target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--profile", "component", "--locked", "--quiet", "--target", "wasm32-wasip2", "-p", package])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(repo());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{package} build failed:\n{}", String::from_utf8_lossy(&o.stderr));
    let name = package.replace('-', "_");
    let wasm = target.join(format!("wasm32-wasip2/component/{name}.wasm"));
    assert!(wasm.is_file(), "{}", wasm.display());
    // One copy per build environment (which index it bundles), named by a digest
    // of that environment.
    let label: String = {
        use sha2::Digest;
        let env = env.iter().map(|(k, v)| format!("{k}={}", v.display())).collect::<Vec<_>>().join(";");
        sha2::Sha256::digest(env.as_bytes()).iter().take(8).map(|b| format!("{b:02x}")).collect()
    };
    let copy = target_dir().join(format!("edge-tests/components/{name}-{label}.wasm"));
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&wasm, &copy).unwrap();
    copy
}

/// A knowledge base folder of this repository built into a site and index, and
/// the function compiled over it (once per test binary and folder).
pub fn built(content: &str) -> Demo {
    let dist = target_dir().join("edge-tests").join(content.replace('/', "_"));
    let o = Command::new(env!("CARGO_BIN_EXE_site-builder"))
        .args(["build", "--quiet", "--content", content, "--out"])
        .arg(&dist)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(o.status.success(), "site build of {content} failed:\n{}", String::from_utf8_lossy(&o.stderr));
    let component = build_component("search-fn", &[("KB_INDEX", &dist.join("index.bin"))]);
    Demo { dist, component }
}

/// A fresh state folder (key-value database) for one host, under the tests'
/// target folder; each host starts with no rate-limit counters.
pub fn state_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = target_dir().join(format!("edge-tests/state/{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Starts a host over the demo with these Spin variables (name, value).
///
/// The scripted LLM servers of the tests listen on 127.0.0.1, so unless a test
/// says otherwise the component may call any loopback port
/// (`llm_allowed_outbound_host`); production's default allows only the provider.
pub fn start(vars: &[(&str, &str)]) -> edge_host::Running {
    start_over(demo(), vars)
}

/// [`start`] over another build than the demo's.
pub fn start_over(d: &Demo, vars: &[(&str, &str)]) -> edge_host::Running {
    start_configured(d, vars, |_| {})
}

/// [`start_over`] with the host's configuration changed by `change`.
pub fn start_configured(
    d: &Demo,
    vars: &[(&str, &str)],
    change: impl FnOnce(&mut edge_host::HostConfig),
) -> edge_host::Running {
    let mut variables = edge_host::Variables::defaults();
    variables.set("llm_allowed_outbound_host", "http://127.0.0.1:*").unwrap();
    for (n, v) in vars {
        variables.set(n, v).unwrap();
    }
    let mut cfg = edge_host::HostConfig {
        addr: "127.0.0.1:0".parse().unwrap(),
        request_timeout: Duration::from_secs(30),
        ..edge_host::HostConfig::search_fn(d.dist.join("site"), d.component.clone(), variables, state_dir())
    };
    change(&mut cfg);
    edge_host::spawn(cfg).unwrap()
}

/// The host with default variables, shared by the tests of one binary.
pub fn host() -> &'static edge_host::Running {
    static HOST: OnceLock<edge_host::Running> = OnceLock::new();
    HOST.get_or_init(|| start(&[]))
}

/// A response, read whole.
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `method url` with `headers` and an optional body; any status is returned.
pub fn request(method: &str, url: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> Resp {
    let client = kb_common::http::blocking_client()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = client.request(method.clone(), url);
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    if let Some(body) = body {
        req = req.body(body.to_vec());
    }
    let resp = req.send().unwrap_or_else(|e| panic!("{method} {url}: {}", kb_common::http::describe(&e)));
    let status = resp.status().as_u16();
    let headers =
        resp.headers().iter().map(|(n, v)| (n.as_str().to_string(), v.to_str().unwrap_or("").to_string())).collect();
    let body = resp.bytes().unwrap_or_else(|e| panic!("{method} {url}: reading the body: {e}")).to_vec();
    Resp { status, headers, body }
}

pub fn get(url: &str) -> Resp {
    request("GET", url, &[], None)
}
