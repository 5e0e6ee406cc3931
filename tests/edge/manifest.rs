//! `spin.toml` cannot be run here (no Spin CLI), so it is checked: it parses as a
//! version-2 manifest; its routes send the component's API routes to `search-fn`
//! and everything else to the site; every file it references exists after the
//! build its build command describes; its variables are the ones the function and
//! the local host know, with the same defaults; and `openapi.yaml` documents exactly
//! the routes the function serves.

use std::path::Path;

use toml::Value;

use crate::support::{demo, repo, schema};

fn manifest() -> Value {
    let text = std::fs::read_to_string(repo().join("spin.toml")).unwrap();
    toml::from_str(&text).unwrap_or_else(|e| panic!("spin.toml does not parse: {e}"))
}

/// Spin's route patterns: `/...` is a wildcard tail, otherwise exact.
fn route_matches(pattern: &str, path: &str) -> bool {
    match pattern.strip_suffix("/...") {
        Some(prefix) => path == prefix || path.starts_with(&format!("{prefix}/")),
        None => pattern == path,
    }
}

/// The component Spin would pick for `path`: the longest matching route wins.
fn component_for(m: &Value, path: &str) -> String {
    let triggers = m["trigger"]["http"].as_array().unwrap();
    let best = triggers
        .iter()
        .filter(|t| route_matches(t["route"].as_str().unwrap(), path))
        .max_by_key(|t| t["route"].as_str().unwrap().trim_end_matches("...").len())
        .unwrap_or_else(|| panic!("no route in spin.toml serves {path}"));
    best["component"].as_str().unwrap().to_string()
}

#[test]
fn routes_send_the_api_to_the_function_and_the_rest_to_the_site() {
    let m = manifest();
    assert_eq!(m["spin_manifest_version"].as_integer(), Some(2));
    for (route, _) in search_fn::api::ROUTES {
        assert_eq!(component_for(&m, route), "search-fn", "{route}");
    }
    assert_eq!(component_for(&m, "/api/anything-new"), "search-fn", "unknown API paths get the function's JSON 404");
    for path in ["/", "/index.html", "/campus/parking/buying-a-parking-permit.html", "/static/style.css"] {
        assert_eq!(component_for(&m, path), "site", "{path}");
    }
    for t in m["trigger"]["http"].as_array().unwrap() {
        let c = t["component"].as_str().unwrap();
        assert!(m["component"].get(c).is_some(), "route {} names an undefined component {c}", t["route"]);
    }
}

#[test]
#[ignore = "needs the model and the wasm32-wasip2 target (the demo built and its component compiled): scripts/test runs it"]
fn every_referenced_file_exists_after_the_build() {
    let m = manifest();
    let f = &m["component"]["search-fn"];
    let build = f["build"]["command"].as_str().unwrap();
    // The build command writes the site and index to dist/ and then the component;
    // the tests ran the same two steps into their own folders, so map them there.
    assert!(build.contains("site-builder -- build --content content --out dist"), "{build}");
    assert!(build.find("build --content").unwrap() < build.find("-p search-fn").unwrap(), "index before component");
    assert!(build.contains("--target wasm32-wasip2") && build.contains("--profile component"), "{build}");
    let d = demo();
    let local = |p: &str| -> std::path::PathBuf {
        if let Some(rest) = p.strip_prefix("dist/") {
            d.dist.join(rest)
        } else if p == "target/wasm32-wasip2/component/search_fn.wasm" {
            d.component.clone()
        } else {
            panic!("spin.toml references {p}, which no build step writes")
        }
    };
    let source = local(f["source"].as_str().unwrap());
    assert!(source.is_file(), "{}", source.display());
    let site = &m["component"]["site"];
    let files = site["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["destination"].as_str(), Some("/"));
    let site_dir = local(files[0]["source"].as_str().unwrap());
    assert!(site_dir.join("index.html").is_file(), "{}", site_dir.display());
    let not_found = site["environment"]["CUSTOM_404_PATH"].as_str().unwrap();
    assert!(site_dir.join(not_found).is_file(), "{not_found}");
    // Watched folders exist in the repository.
    for w in f["build"]["watch"].as_array().unwrap() {
        let dir = w.as_str().unwrap().split("/**").next().unwrap();
        assert!(repo().join(dir).is_dir(), "watch {dir}");
    }
    // The fileserver is pinned by URL and digest.
    let src = &site["source"];
    assert!(src["url"].as_str().unwrap().starts_with("https://github.com/spinframework/spin-fileserver/releases/"));
    let digest = src["digest"].as_str().unwrap();
    assert!(
        digest.strip_prefix("sha256:").is_some_and(|h| h.len() == 64 && h.chars().all(|c| c.is_ascii_hexdigit())),
        "{digest}"
    );
}

#[test]
fn variables_match_the_function_and_the_host() {
    let m = manifest();
    let vars = m["variables"].as_table().unwrap();
    let declared: Vec<(&str, &str)> = edge_host::variables::DECLARED.to_vec();
    let mut in_manifest: Vec<(&str, &str)> = vars
        .iter()
        .map(|(k, v)| (k.as_str(), v["default"].as_str().unwrap_or_else(|| panic!("{k}: no default"))))
        .collect();
    in_manifest.sort();
    let mut expected = declared.clone();
    expected.sort();
    assert_eq!(in_manifest, expected, "spin.toml [variables] vs edge_host::variables::DECLARED");
    assert_eq!(vars["llm_api_key"]["secret"].as_bool(), Some(true), "the API key is a secret");
    assert_eq!(
        vars["postgres_url"]["secret"].as_bool(),
        Some(true),
        "the database URL (with its password) is a secret"
    );
    assert_eq!(vars["insights_token"]["secret"].as_bool(), Some(true), "the insights token is a secret");
    let comp = m["component"]["search-fn"]["variables"].as_table().unwrap();
    for (name, _) in &declared {
        assert_eq!(comp[*name].as_str(), Some(format!("{{{{ {name} }}}}").as_str()), "component variable {name}");
    }
    // The host enforces exactly the manifest's allow-list, and the manifest grants
    // exactly the key-value store and the SQLite database the host opens.
    let strings = |field: &str| -> Vec<String> {
        let list = m["component"]["search-fn"][field].as_array().unwrap_or_else(|| panic!("spin.toml: no {field}"));
        list.iter().map(|h| h.as_str().unwrap().to_string()).collect()
    };
    let hosts = strings("allowed_outbound_hosts");
    assert_eq!(hosts, edge_host::outbound::SEARCH_FN_ALLOWED_OUTBOUND_HOSTS, "spin.toml allowed_outbound_hosts");
    let stores = strings("key_value_stores");
    let host = edge_host::HostConfig::search_fn("s".into(), "c".into(), edge_host::Variables::defaults(), "t".into());
    assert_eq!(stores, host.key_value_stores, "spin.toml key_value_stores");
    assert_eq!(strings("sqlite_databases"), host.sqlite_databases, "spin.toml sqlite_databases");
}

#[test]
fn openapi_documents_exactly_the_served_routes_and_limits() {
    let doc = schema::openapi();
    let paths = doc["paths"].as_object().unwrap();
    let mut documented: Vec<&str> = paths.keys().map(String::as_str).collect();
    let mut served: Vec<&str> = search_fn::api::ROUTES.iter().map(|r| r.0).collect();
    documented.sort();
    served.sort();
    assert_eq!(documented, served);
    for (route, methods) in search_fn::api::ROUTES {
        let mut ops: Vec<String> = paths[*route].as_object().unwrap().keys().map(|m| m.to_uppercase()).collect();
        ops.sort();
        let mut expected: Vec<String> = methods.iter().map(|m| m.to_string()).chain(["OPTIONS".into()]).collect();
        expected.sort();
        assert_eq!(ops, expected, "{route}");
    }
    let params = doc["paths"]["/api/search"]["get"]["parameters"].as_array().unwrap();
    let param = |name: &str| params.iter().find(|p| p["name"] == name).unwrap()["schema"].clone();
    use search_fn::api::{DEFAULT_K, MAX_K, MAX_PAGE, MAX_QUERY_CHARS};
    assert_eq!(param("q")["maxLength"].as_u64(), Some(MAX_QUERY_CHARS as u64));
    assert_eq!(param("k")["maximum"].as_u64(), Some(MAX_K as u64));
    assert_eq!(param("k")["default"].as_u64(), Some(DEFAULT_K as u64));
    assert_eq!(param("page")["maximum"].as_u64(), Some(MAX_PAGE as u64));
    let modes: Vec<String> = doc["components"]["schemas"]["Mode"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect();
    let known: Vec<String> = search_core::index::Mode::ALL.iter().map(|m| m.name().to_string()).collect();
    assert_eq!(modes, known);
    assert!(Path::new(&repo().join("openapi.yaml")).is_file());
    // Every limited endpoint answers 429 as documented, and the contract names its
    // variable and default as the function has them.
    let about = doc["info"]["description"].as_str().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
    for bucket in search_fn::limit::Bucket::ALL {
        let default = search_fn::limit::Limits::default().of(bucket);
        let method = search_fn::api::ROUTES.iter().find(|r| r.0 == bucket.path()).unwrap().1[0].to_lowercase();
        let op = &doc["paths"][bucket.path()][&method];
        assert_eq!(op["responses"]["429"]["$ref"], "#/components/responses/RateLimited", "{}", bucket.path());
        let said = format!("`{}` `{}` ({default}", bucket.path(), bucket.variable());
        let said_first = format!("`{}` `{}` (default {default})", bucket.path(), bucket.variable());
        assert!(about.contains(&said) || about.contains(&said_first), "openapi.yaml's description: {said}…");
    }
}

/// Each endpoint's rate limit is a Spin variable the manifest declares, and the
/// host, with the function's default.
#[test]
fn every_endpoint_limit_is_a_declared_variable_with_the_function_default() {
    let m = manifest();
    for bucket in search_fn::limit::Bucket::ALL {
        let default = search_fn::limit::Limits::default().of(bucket).to_string();
        let name = bucket.variable();
        assert_eq!(m["variables"][name]["default"].as_str(), Some(default.as_str()), "spin.toml {name}");
        let host = edge_host::variables::DECLARED.iter().find(|(n, _)| *n == name).map(|(_, d)| *d);
        assert_eq!(host, Some(default.as_str()), "edge_host::variables::DECLARED {name}");
    }
    let limits: Vec<&str> =
        edge_host::variables::DECLARED.iter().map(|(n, _)| *n).filter(|n| n.ends_with("_rate_limit")).collect();
    assert_eq!(limits.len(), search_fn::limit::Bucket::ALL.len(), "a limit the function does not read: {limits:?}");
}
